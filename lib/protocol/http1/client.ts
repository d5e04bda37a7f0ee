/**
 * Control-plane HTTP/1.1 requests (metadata, statistics): convenience over
 * speed, on a keep-alive connection of their own so they never disturb the
 * request loop's connections.
 */
import { ConnectionError } from "../errors.ts";
import { type Endpoint, formatAddress } from "./connect.ts";
import { Http1Connection, type ResponseHead } from "./connection.ts";
import { buildRequest } from "./request.ts";

export interface HttpRequestOptions {
  headers?: Record<string, string>;
  body?: Uint8Array;
}

export interface HttpResponse {
  status: number;
  /** The header fields the parser keeps (see ResponseHead). */
  headers: ResponseHead;
  body: Uint8Array;
}

export class Http1Client {
  /** "host:port", also sent as the Host header. */
  readonly address: string;
  #endpoint: Endpoint;
  #connection: Http1Connection | undefined;
  /** Requests run one at a time on the one connection. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(endpoint: Endpoint) {
    this.#endpoint = endpoint;
    this.address = formatAddress(endpoint.hostname, endpoint.port);
  }

  /** Sends one request and reads the whole response; the connection opens on first use. */
  request(method: string, path: string, options: HttpRequestOptions = {}): Promise<HttpResponse> {
    const bytes = buildRequest(method, path, { host: this.address, ...options });
    const run = async (): Promise<HttpResponse> => {
      if (this.#closed) {
        throw new ConnectionError(`Client for "${this.address}" is closed`, this.address);
      }
      this.#connection ??= await Http1Connection.open(this.#endpoint);
      const head = await this.#connection.send(bytes);
      const body = (await this.#connection.readBody()).slice();
      return { status: head.status, headers: { ...head }, body };
    };
    const result = this.#queue.then(run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Closes the connection; pending and later requests fail with ConnectionError. */
  close(): void {
    this.#closed = true;
    this.#connection?.close();
  }
}
