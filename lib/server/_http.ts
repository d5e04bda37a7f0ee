/**
 * A small HTTP/1.1 server over Deno.listen, shared by the HTTP front ends.
 *
 * Hand-written rather than Deno.serve because it measured faster for small
 * inference requests (wrk, 1 thread, on the same 2 cores; binary `simple`
 * infer: 34-42k requests/s against 11-12k with Deno.serve at 16 connections,
 * 19.5k against 5.3k at 1; JSON infer: 31-43k against 23-27k) and because it
 * can stamp the arrival of a request's first byte. Requests on one connection are handled one after
 * another, so pipelined requests are answered in order; each response goes
 * out in a single write with Nagle's algorithm off.
 */

export interface HttpRequest {
  readonly method: string;
  /** The path without the query string, still percent-encoded. */
  readonly path: string;
  /** The query string without "?", "" when absent. */
  readonly query: string;
  /** The last value of a header; `name` must be lowercase. */
  header(name: string): string | undefined;
  readonly body: Uint8Array;
  /** performance.now() when the first byte of the request was read. */
  readonly arrival: number;
}

export interface HttpResponse {
  status: number;
  contentType?: string;
  headers?: Record<string, string>;
  body?: Uint8Array | readonly Uint8Array[];
  /**
   * A body written piece by piece, each `write` sent at once as a chunk of
   * the chunked transfer coding (server-sent events); replaces `body`. The
   * response ends when the promise settles; a rejection drops the connection.
   */
  stream?: (write: (data: Uint8Array) => Promise<void>) => Promise<void>;
  /**
   * Close the connection after this response without announcing it, as some
   * servers do after a stream (tests of clients' keep-alive handling).
   */
  dropConnection?: boolean;
}

export type HttpHandler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface HttpServer {
  readonly port: number;
  close(): Promise<void>;
}

const MAX_HEAD = 64 * 1024;
const MAX_BODY = 1024 ** 3;
const INITIAL_BUFFER = 16 * 1024;
const CR = 13;
const LF = 10;

const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
const CRLF = encoder.encode("\r\n");

/** A malformed request: answered with `status`, then the connection closes. */
class BadRequest extends Error {
  constructor(message: string, readonly status = 400) {
    super(message);
  }
}

const EMPTY = new Uint8Array(0);

/** Filled in field by field while the request is read. */
class IncomingRequest implements HttpRequest {
  method = "";
  path = "";
  query = "";
  /** Lowercase header names and their values, in order. */
  names: string[] = [];
  values: string[] = [];
  body: Uint8Array = EMPTY;
  arrival = 0;
  keepAlive = true;

  header(name: string): string | undefined {
    const i = this.names.lastIndexOf(name);
    return i < 0 ? undefined : this.values[i];
  }
}

/** Status line and headers; `framing` is the Content-Length or Transfer-Encoding line. */
function headText(response: HttpResponse, request: IncomingRequest, framing: string): string {
  let text = `HTTP/1.1 ${response.status} ${REASONS[response.status] ?? "Unknown"}\r\n`;
  if (response.contentType !== undefined) text += `Content-Type: ${response.contentType}\r\n`;
  text += framing;
  if (response.headers !== undefined) {
    for (const name in response.headers) text += `${name}: ${response.headers[name]}\r\n`;
  }
  return text + (request.keepAlive ? "\r\n" : "Connection: close\r\n\r\n");
}

/** Status line, headers and body in one buffer, for a single write. */
function serialize(response: HttpResponse, request: IncomingRequest): Uint8Array {
  const body = response.body;
  const parts: readonly Uint8Array[] = body === undefined
    ? []
    : body instanceof Uint8Array
    ? [body]
    : body;
  let length = 0;
  for (const part of parts) length += part.byteLength;
  const text = headText(response, request, `Content-Length: ${length}\r\n`);
  const head = request.method === "HEAD";
  const out = new Uint8Array(text.length + (head ? 0 : length));
  // Header text is ASCII, so its length in bytes is its length in characters.
  encoder.encodeInto(text, out);
  if (!head) {
    let offset = text.length;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.byteLength;
    }
  }
  return out;
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.byteLength) offset += await conn.write(data.subarray(offset));
}

const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/** Writes a streamed response: the head, then one chunk per write, then the last chunk. */
async function writeStream(
  conn: Deno.Conn,
  response: HttpResponse,
  request: IncomingRequest,
): Promise<void> {
  await writeAll(
    conn,
    encoder.encode(headText(response, request, "Transfer-Encoding: chunked\r\n")),
  );
  if (request.method === "HEAD") return;
  await response.stream!(async (data) => {
    if (data.byteLength === 0) return;
    const size = `${data.byteLength.toString(16)}\r\n`;
    const chunk = new Uint8Array(size.length + data.byteLength + 2);
    encoder.encodeInto(size, chunk);
    chunk.set(data, size.length);
    chunk.set(CRLF, size.length + data.byteLength);
    await writeAll(conn, chunk);
  });
  await writeAll(conn, LAST_CHUNK);
}

/** The `{"error": message}` body every KServe-style front end answers failures with. */
export function errorResponse(status: number, message: string): HttpResponse {
  return {
    status,
    contentType: "application/json",
    body: encoder.encode(JSON.stringify({ error: message })),
  };
}

/** Reads requests from one connection and answers them in order. */
class Connection {
  #buffer = new Uint8Array(INITIAL_BUFFER);
  #start = 0;
  #end = 0;

  constructor(readonly conn: Deno.TcpConn, readonly handler: HttpHandler) {}

  async run(): Promise<void> {
    try {
      this.conn.setNoDelay(true);
      while (await this.#serveOne());
    } catch {
      // A reset or closed connection ends the loop; there is nobody left to answer.
    } finally {
      try {
        this.conn.close();
      } catch {
        // Already closed by close().
      }
    }
  }

  /** Reads more bytes into the buffer; false at end of stream. */
  async #fill(): Promise<boolean> {
    if (this.#end === this.#buffer.length) {
      if (this.#start > 0) {
        this.#buffer.copyWithin(0, this.#start, this.#end);
        this.#end -= this.#start;
        this.#start = 0;
      } else {
        const larger = new Uint8Array(this.#buffer.length * 2);
        larger.set(this.#buffer);
        this.#buffer = larger;
      }
    }
    const n = await this.conn.read(this.#buffer.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** Index just past the next CRLF at or after `from`, or -1. */
  #lineEnd(from: number): number {
    const buffer = this.#buffer;
    for (let i = from; i + 1 < this.#end; i++) {
      if (buffer[i] === CR && buffer[i + 1] === LF) return i + 2;
    }
    return -1;
  }

  /** Reads through the blank line ending the head; returns its end index, -1 at clean EOF. */
  async #readHead(): Promise<number> {
    let scan = this.#start;
    for (;;) {
      for (let line = this.#lineEnd(scan); line >= 0; line = this.#lineEnd(scan)) {
        if (line === scan + 2 && line - 2 > this.#start) return line;
        if (line === this.#start + 2) {
          // Tolerate stray CRLFs between requests (RFC 9112 section 2.2).
          this.#start = line;
        }
        scan = line;
      }
      if (this.#end - this.#start > MAX_HEAD) {
        throw new BadRequest("Request header is too large", 431);
      }
      const offset = scan - this.#start;
      const empty = this.#start === this.#end;
      if (!(await this.#fill())) {
        if (empty) return -1;
        throw new BadRequest("Connection closed inside a request header");
      }
      scan = this.#start + offset;
    }
  }

  async #readExact(length: number): Promise<Uint8Array> {
    const available = this.#end - this.#start;
    if (available >= length) {
      const body = this.#buffer.slice(this.#start, this.#start + length);
      this.#start += length;
      return body;
    }
    // Read the rest straight into the body, so nothing past it leaves the socket.
    const body = new Uint8Array(length);
    body.set(this.#buffer.subarray(this.#start, this.#end));
    this.#start = this.#end = 0;
    let filled = available;
    while (filled < length) {
      const n = await this.conn.read(body.subarray(filled));
      if (n === null) throw new BadRequest("Connection closed inside a request body");
      filled += n;
    }
    return body;
  }

  async #readLine(): Promise<string> {
    for (;;) {
      const end = this.#lineEnd(this.#start);
      if (end >= 0) {
        const line = decoder.decode(this.#buffer.subarray(this.#start, end - 2));
        this.#start = end;
        return line;
      }
      if (this.#end - this.#start > MAX_HEAD) throw new BadRequest("Chunk header is too large");
      if (!(await this.#fill())) throw new BadRequest("Connection closed inside a chunked body");
    }
  }

  async #readChunked(): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const sizeText = (await this.#readLine()).split(";")[0].trim();
      const size = /^[0-9a-fA-F]{1,8}$/.test(sizeText) ? parseInt(sizeText, 16) : NaN;
      if (Number.isNaN(size)) throw new BadRequest(`Invalid chunk size "${sizeText}"`);
      if (size === 0) break;
      total += size;
      if (total > MAX_BODY) throw new BadRequest("Request body is too large", 413);
      chunks.push(await this.#readExact(size));
      if ((await this.#readLine()) !== "") throw new BadRequest("Missing CRLF after a chunk");
    }
    while ((await this.#readLine()) !== "");
    const body = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return body;
  }

  /** Reads the head and body of a request into `request`. */
  async #readRequest(request: IncomingRequest): Promise<boolean> {
    const headEnd = await this.#readHead();
    if (headEnd < 0) return false;
    const lines = decoder.decode(this.#buffer.subarray(this.#start, headEnd - 4)).split("\r\n");
    this.#start = headEnd;
    const [method, target, protocol] = lines[0].split(" ");
    if (target === undefined || !protocol?.startsWith("HTTP/1.")) {
      throw new BadRequest(`Malformed request line "${lines[0].slice(0, 80)}"`);
    }
    const { names, values } = request;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const colon = line.indexOf(":");
      if (colon <= 0) throw new BadRequest(`Malformed header line "${line.slice(0, 80)}"`);
      names.push(line.slice(0, colon).trim().toLowerCase());
      values.push(line.slice(colon + 1).trim());
    }
    request.method = method;
    const question = target.indexOf("?");
    request.path = question < 0 ? target : target.slice(0, question);
    request.query = question < 0 ? "" : target.slice(question + 1);
    const connection = request.header("connection")?.toLowerCase();
    request.keepAlive = protocol === "HTTP/1.1"
      ? connection !== "close"
      : connection === "keep-alive";
    const encoding = request.header("transfer-encoding")?.toLowerCase();
    if (encoding !== undefined && encoding !== "identity" && encoding !== "chunked") {
      throw new BadRequest(`Unsupported transfer encoding "${encoding}"`, 501);
    }
    const chunked = encoding === "chunked";
    const lengthText = request.header("content-length");
    const length = lengthText === undefined ? 0 : Number(lengthText);
    if (!Number.isInteger(length) || length < 0) {
      throw new BadRequest(`Invalid Content-Length "${lengthText}"`);
    }
    if (length > MAX_BODY) throw new BadRequest("Request body is too large", 413);
    if (
      (chunked || length > 0) && this.#start === this.#end &&
      request.header("expect")?.toLowerCase() === "100-continue"
    ) {
      await writeAll(this.conn, CONTINUE);
    }
    if (chunked) request.body = await this.#readChunked();
    else if (length > 0) request.body = await this.#readExact(length);
    return true;
  }

  /** Handles one request; false when the connection should close. */
  async #serveOne(): Promise<boolean> {
    const request = new IncomingRequest();
    request.arrival = performance.now();
    if (this.#start === this.#end) {
      if (!(await this.#fill())) return false;
      request.arrival = performance.now();
    }
    try {
      if (!(await this.#readRequest(request))) return false;
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      request.keepAlive = false;
      await writeAll(this.conn, serialize(errorResponse(error.status, error.message), request));
      return false;
    }
    let response: HttpResponse;
    try {
      const result = this.handler(request);
      response = result instanceof Promise ? await result : result;
    } catch (error) {
      response = errorResponse(500, (error as Error).message);
    }
    if (response.stream === undefined) await writeAll(this.conn, serialize(response, request));
    else await writeStream(this.conn, response, request);
    return request.keepAlive && response.dropConnection !== true;
  }
}

/** Listens on `hostname:port` (0 = ephemeral) and serves until close(). */
export function serveHttp(
  handler: HttpHandler,
  options: { hostname: string; port: number },
): HttpServer {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const open = new Set<Connection>();
  const running = new Set<Promise<void>>();
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        const connection = new Connection(conn, handler);
        open.add(connection);
        const task = connection.run().finally(() => {
          open.delete(connection);
          running.delete(task);
        });
        running.add(task);
      }
    } catch {
      // close() closed the listener.
    }
  })();
  let closing: Promise<void> | undefined;
  return {
    port: listener.addr.port,
    close() {
      closing ??= (async () => {
        try {
          listener.close();
        } catch {
          // Already closed.
        }
        for (const connection of open) {
          try {
            connection.conn.close();
          } catch {
            // Closed by its own loop.
          }
        }
        await accepting;
        await Promise.allSettled(running);
      })();
      return closing;
    },
  };
}
