/**
 * One keep-alive HTTP/1.1 connection: the hot path of the HTTP clients.
 *
 * A request is pre-built bytes written in one call; the response head is
 * parsed from a buffer reused for the life of the connection, and the body is
 * either returned as a view into that buffer or skipped without copying.
 */
import { ConnectionError, ProtocolError, TimeoutError } from "../errors.ts";
import { type ByteConn, connect, describeError, type Endpoint, formatAddress } from "./connect.ts";
import type { ResponseHead } from "./_head.ts";
import { ResponseReader } from "./_response_reader.ts";

export type { ResponseHead };

/** Where send() records its timestamps (performance.now() ms); RequestTiming fits. */
export interface ExchangeTiming {
  /** The request is fully written. */
  sendEnd: number;
  /** The first byte of the response arrived. */
  recvStart: number;
}

/** What sendSkippingBody() records too: when the answer ended, and that it was one response. */
export interface UnaryTiming extends ExchangeTiming {
  end: number;
  responses: number;
}

/** A 2xx status. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Errors that mean the peer went away, as opposed to answering wrongly. */
function isConnectionLoss(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof Deno.errors.ConnectionReset ||
    error instanceof Deno.errors.BrokenPipe || error instanceof Deno.errors.ConnectionAborted ||
    error instanceof Deno.errors.UnexpectedEof;
}

export class Http1Connection {
  /** "host:port", as used in error messages. */
  readonly address: string;
  #endpoint: Endpoint;
  #conn: ByteConn | undefined;
  #reader: ResponseReader;
  /** The current stream completed an exchange, so a silent close means it went idle. */
  #reused = false;
  #closed = false;
  #busy = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  readonly #onTimeout = (): void => {
    this.#timedOut = true;
    this.#drop();
  };

  private constructor(endpoint: Endpoint, conn: ByteConn) {
    this.#endpoint = endpoint;
    this.#conn = conn;
    this.address = formatAddress(endpoint.hostname, endpoint.port);
    this.#reader = new ResponseReader(conn, this.address);
  }

  /** Connects now, so an unreachable server fails here rather than on the first request. */
  static async open(endpoint: Endpoint): Promise<Http1Connection> {
    return new Http1Connection(endpoint, await connect(endpoint));
  }

  /** Whether a stream is open (false after the server closed it or an error). */
  get connected(): boolean {
    return this.#conn !== undefined;
  }

  /**
   * Writes a complete request and reads the response head; the body must then
   * be consumed with readBody() or skipBody() before the next send(). The head
   * object is reused by later responses. A stream that the server closed
   * while idle is reopened and the request resent once.
   */
  send(request: Uint8Array, timing?: ExchangeTiming): Promise<ResponseHead> {
    return this.#exchange(request, timing, undefined) as Promise<ResponseHead>;
  }

  /**
   * send() for an answer whose body is not wanted: a 2xx body is consumed,
   * `timing.end` stamped and the promise resolves to undefined; any other
   * status rejects with `failure(status, body)`. One async call for the whole
   * exchange: on the hot path of the closed loop every level of async calls
   * costs a promise, a generator and a microtask per request.
   */
  sendSkippingBody(
    request: Uint8Array,
    timing: UnaryTiming,
    failure: (status: number, body: Uint8Array) => Error,
  ): Promise<undefined> {
    return this.#exchange(request, timing, failure) as Promise<undefined>;
  }

  async #exchange(
    request: Uint8Array,
    timing: ExchangeTiming | undefined,
    failure: ((status: number, body: Uint8Array) => Error) | undefined,
  ): Promise<ResponseHead | undefined> {
    if (this.#closed) throw this.#closedError();
    if (this.#busy) throw new TypeError("A request is already in flight on this connection");
    this.#busy = true;
    this.#timedOut = false;
    const timeoutMs = this.#endpoint.requestTimeoutMs;
    if (timeoutMs !== undefined) this.#timer = setTimeout(this.#onTimeout, timeoutMs);
    const reader = this.#reader;
    let head: ResponseHead | undefined;
    for (let attempt = 0; head === undefined; attempt++) {
      let reading = false;
      try {
        if (this.#conn === undefined) await this.#reopen();
        const conn = this.#conn!;
        const written = await conn.write(request);
        if (written < request.byteLength) await this.#writeRest(conn, request, written);
        if (timing !== undefined) timing.sendEnd = performance.now();
        reading = true;
        // readHead() inlined, so that the socket's own read promise is awaited here.
        reader.expectHead();
        head = reader.bufferedHead();
        while (head === undefined) {
          if (!reader.received(await reader.readMore())) throw reader.eof();
          head = reader.bufferedHead();
        }
      } catch (error) {
        const retry = attempt === 0 && this.#reused &&
          (!reading || !reader.responseStarted) &&
          !this.#timedOut && !this.#closed && isConnectionLoss(error);
        this.#drop();
        if (!retry) throw this.#fail(error);
      }
    }
    if (timing !== undefined) timing.recvStart = reader.firstByteAt;
    if (!reader.bodyPending) this.#complete();
    if (failure === undefined) return head;
    const unary = timing as UnaryTiming;
    if (isSuccess(head.status)) {
      if (!this.skipBufferedBody()) await this.skipBody();
      unary.end = performance.now();
      unary.responses = 1;
      return undefined;
    }
    const body = await this.readBody();
    unary.end = performance.now();
    unary.responses = 1;
    throw failure(head.status, body);
  }

  /** The response body, as a view valid until the next call on this connection. */
  async readBody(): Promise<Uint8Array> {
    if (!this.#reader.bodyPending) return this.#reader.readBody();
    try {
      const body = await this.#reader.readBody();
      this.#complete();
      return body;
    } catch (error) {
      this.#drop();
      throw this.#fail(error);
    }
  }

  /**
   * Consumes the response body piece by piece as it arrives (streamed
   * responses such as server-sent events); each view passed to `onData` is
   * valid only during the call. An exception from `onData` fails the exchange
   * and drops the connection, whose stream is then mid-body.
   */
  async streamBody(onData: (data: Uint8Array) => void): Promise<void> {
    if (!this.#reader.bodyPending) return;
    try {
      await this.#reader.streamBody(onData);
      this.#complete();
    } catch (error) {
      this.#drop();
      throw this.#fail(error);
    }
  }

  /**
   * Consumes the response body if it has fully arrived (true); otherwise
   * nothing happens and skipBody() must follow. Saves the hot path a chain
   * of promises when a small response came in one read.
   */
  skipBufferedBody(): boolean {
    if (!this.#reader.bodyPending) return true;
    if (!this.#reader.skipBufferedBody()) return false;
    this.#complete();
    return true;
  }

  /** Consumes the response body without copying it. */
  async skipBody(): Promise<void> {
    if (!this.#reader.bodyPending) return;
    try {
      await this.#reader.skipBody();
      this.#complete();
    } catch (error) {
      this.#drop();
      throw this.#fail(error);
    }
  }

  /** Closes the stream for good; an exchange in flight fails with ConnectionError. */
  close(): void {
    this.#closed = true;
    this.#drop();
    clearTimeout(this.#timer);
  }

  async #writeRest(conn: ByteConn, request: Uint8Array, written: number): Promise<void> {
    let offset = written;
    while (offset < request.byteLength) offset += await conn.write(request.subarray(offset));
  }

  async #reopen(): Promise<void> {
    const conn = await connect(this.#endpoint);
    if (this.#closed || this.#timedOut) {
      conn.close();
      throw this.#timedOut ? this.#timeoutError() : this.#closedError();
    }
    this.#conn = conn;
    this.#reused = false;
    this.#reader.reset(conn);
  }

  /** The exchange ended cleanly. */
  #complete(): void {
    clearTimeout(this.#timer);
    this.#busy = false;
    if (this.#reader.head.keepAlive) this.#reused = true;
    else this.#drop();
  }

  /** Ends the exchange with an error, typed for the caller. */
  #fail(error: unknown): Error {
    clearTimeout(this.#timer);
    this.#busy = false;
    if (this.#timedOut) return this.#timeoutError();
    if (this.#closed) return this.#closedError();
    if (
      error instanceof ConnectionError || error instanceof ProtocolError ||
      error instanceof TimeoutError
    ) {
      return error;
    }
    return new ConnectionError(
      `Connection to "${this.address}" failed: ${describeError(error)}`,
      this.address,
      { cause: error },
    );
  }

  #timeoutError(): TimeoutError {
    const timeoutMs = this.#endpoint.requestTimeoutMs ?? 0;
    return new TimeoutError(
      `Request to "${this.address}" timed out after ${timeoutMs} ms`,
      timeoutMs,
    );
  }

  #closedError(): ConnectionError {
    return new ConnectionError(`Connection to "${this.address}" is closed`, this.address);
  }

  #drop(): void {
    const conn = this.#conn;
    if (conn === undefined) return;
    this.#conn = undefined;
    this.#reused = false;
    try {
      conn.close();
    } catch {
      // Already closed by the runtime after a failed read or write.
    }
  }
}
