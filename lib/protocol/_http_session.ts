/**
 * What the HTTP/1.1 inference clients (KServe, TorchServe, OpenAI) share:
 * the server URL, requests encoded once, error answers, and sessions that
 * each own one keep-alive connection.
 */
import { InferError, oneLine } from "./errors.ts";
import {
  buildRequest,
  type Endpoint,
  formatAddress,
  Http1Connection,
  isSuccess,
  type ResponseHead,
  type TlsOptions,
} from "./http1/mod.ts";
import type { InferOptions, InferSession, OutputTensors, PreparedRequest } from "./types.ts";
import type { ModelInfo } from "../types/model.ts";
import type { RequestTiming } from "../types/timing.ts";

export interface HttpClientOptions {
  /** "host:port", "http://host:port[/base/path]" or "https://..."; default port 8000 (443 for https). */
  url: string;
  /** Extra header fields sent with every request (-H). */
  headers?: Record<string, string>;
  /** Default 5000. */
  connectTimeoutMs?: number;
  /** No limit by default. */
  requestTimeoutMs?: number;
  /** Certificates for https URLs. */
  tls?: TlsOptions;
}

export const DEFAULT_HTTP_PORT = 8000;
const DEFAULT_HTTPS_PORT = 443;

/** Endpoint and base path of a KServe URL. */
export function parseKServeUrl(url: string): { endpoint: Endpoint; basePath: string } {
  const match = /^(?:(https?):\/\/)?([^/?#]*)([^?#]*)$/i.exec(url.trim());
  const authority = match?.[2] ?? "";
  const hostPort = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(authority);
  if (match === null || hostPort === null) {
    throw new RangeError(`Invalid server URL "${url}": expected host:port or http(s)://host:port`);
  }
  const secure = match[1]?.toLowerCase() === "https";
  const port = hostPort[2] === undefined
    ? (secure ? DEFAULT_HTTPS_PORT : DEFAULT_HTTP_PORT)
    : Number(hostPort[2]);
  if (port < 1 || port > 65535) throw new RangeError(`Invalid port in server URL "${url}"`);
  const endpoint: Endpoint = { hostname: hostPort[1], port };
  if (secure) endpoint.tls = {};
  return { endpoint, basePath: match[3].replace(/\/+$/, "") };
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The start of a text for an error message, quoted. */
export function preview(text: string): string {
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}...` : text);
}

const decoder = new TextDecoder();
const MAX_ERROR_TEXT = 500;

/**
 * The server's `{"error": "..."}` message (OpenAI-style servers: `{"error":
 * {"message": "..."}}`), or the body text, as an InferError.
 */
export function serverError(status: number, body: Uint8Array): InferError {
  const text = decoder.decode(body).trim();
  let message = text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}...` : text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && typeof parsed.error === "string") message = parsed.error;
    else if (
      isObject(parsed) && isObject(parsed.error) && typeof parsed.error.message === "string"
    ) {
      message = parsed.error.message;
    }
  } catch {
    // Not JSON (a proxy's error page, say): the text itself is the message.
  }
  return new InferError(
    `Server returned ${status}: ${oneLine(message) || "empty response"}`,
    status,
  );
}

/** Header fields with `extra` overriding `base` regardless of case. */
export function mergeHeaders(
  base: Record<string, string>,
  extra: Record<string, string>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  const overridden = new Set(Object.keys(extra).map((k) => k.toLowerCase()));
  for (const [name, value] of Object.entries(base)) {
    if (!overridden.has(name.toLowerCase())) merged[name] = value;
  }
  return Object.assign(merged, extra);
}

/**
 * A model as a client that has no model metadata to ask for (TorchServe,
 * OpenAI) defines it: its tensors, and no batching, sequences or ensembles.
 */
export function fixedModelInfo(
  model: string,
  version: string,
  io: Pick<ModelInfo, "platform" | "inputs" | "outputs">,
): ModelInfo {
  return {
    name: model,
    version,
    platform: io.platform,
    versions: [],
    inputs: io.inputs,
    outputs: io.outputs,
    maxBatchSize: 0,
    decoupled: false,
    sequence: false,
    composingModels: [],
    responseCache: false,
  };
}

/** Where a client's requests go: endpoint and base path of its URL, its Host and -H fields. */
export class HttpTarget {
  readonly endpoint: Endpoint;
  readonly basePath: string;
  /** "host:port", the Host header. */
  readonly host: string;
  readonly headers: Record<string, string>;

  constructor(options: HttpClientOptions) {
    const { endpoint, basePath } = parseKServeUrl(options.url);
    endpoint.connectTimeoutMs = options.connectTimeoutMs;
    endpoint.requestTimeoutMs = options.requestTimeoutMs;
    if (endpoint.tls !== undefined && options.tls !== undefined) endpoint.tls = options.tls;
    this.endpoint = endpoint;
    this.basePath = basePath;
    this.host = formatAddress(endpoint.hostname, endpoint.port);
    this.headers = { ...options.headers };
  }

  /** The bytes of a POST to `path`; the -H fields override `headers`. */
  post(path: string, options: { headers: Record<string, string>; body: Uint8Array }): Uint8Array {
    return buildRequest("POST", path, {
      host: this.host,
      headers: mergeHeaders(options.headers, this.headers),
      body: options.body,
    });
  }
}

/** Output tensors of a successful answer's body (a view valid until the next exchange). */
export type BodyDecoder = (body: Uint8Array, head: ResponseHead) => OutputTensors;

/** A request encoded once: the complete HTTP/1.1 request bytes. */
export class PreparedHttpRequest implements PreparedRequest {
  readonly byteLength: number;
  /** `decode`: the outputs of the answer, for sessions that answer with one response. */
  constructor(readonly bytes: Uint8Array, readonly decode?: BodyDecoder) {
    this.byteLength = bytes.byteLength;
  }
}

/** The sessions a client opened, each on its own keep-alive connection; closed with the client. */
export class HttpSessions {
  /** The client in the error a request it did not prepare gets, e.g. "a TorchServe client". */
  readonly client: string;
  readonly #endpoint: Endpoint;
  readonly #open = new Set<InferSession>();

  constructor(endpoint: Endpoint, client: string) {
    this.#endpoint = endpoint;
    this.client = client;
  }

  /** Connects a session that `create` makes of the connection (default: one response each). */
  async open(
    create: (connection: Http1Connection) => InferSession = (connection) =>
      new UnaryHttpSession(connection, this),
  ): Promise<InferSession> {
    const session = create(await Http1Connection.open(this.#endpoint));
    this.#open.add(session);
    return session;
  }

  /** A session closed itself. */
  forget(session: InferSession): void {
    this.#open.delete(session);
  }

  closeAll(): void {
    for (const session of [...this.#open]) session.close();
  }

  /** The TypeError of a request that this client's sessions cannot send. */
  foreignRequest(): TypeError {
    return new TypeError(`The request was not prepared by ${this.client}`);
  }
}

/** Reads the body of an answer with an error status: its InferError, with the end stamped. */
export async function readServerError(
  connection: Http1Connection,
  status: number,
  timing: RequestTiming,
): Promise<InferError> {
  const body = await connection.readBody();
  timing.end = performance.now();
  return serverError(status, body);
}

/** A session whose requests get one response each (KServe, TorchServe). */
export class UnaryHttpSession implements InferSession {
  readonly #connection: Http1Connection;
  readonly #sessions: HttpSessions;

  constructor(connection: Http1Connection, sessions: HttpSessions) {
    this.#connection = connection;
    this.#sessions = sessions;
  }

  infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    if (!(request instanceof PreparedHttpRequest) || request.decode === undefined) {
      return Promise.reject(this.#sessions.foreignRequest());
    }
    timing.start = performance.now();
    // Not an async function: the closed loop awaits the connection's own exchange.
    if (options?.decodeOutputs !== true) {
      return this.#connection.sendSkippingBody(request.bytes, timing, serverError);
    }
    return this.#decoded(request, request.decode, timing);
  }

  async #decoded(
    request: PreparedHttpRequest,
    decode: BodyDecoder,
    timing: RequestTiming,
  ): Promise<OutputTensors> {
    const connection = this.#connection;
    const head = await connection.send(request.bytes, timing);
    if (!isSuccess(head.status)) {
      const error = await readServerError(connection, head.status, timing);
      timing.responses = 1;
      throw error;
    }
    const body = await connection.readBody();
    // Decoding is the caller's post-processing, not part of the measured exchange.
    timing.end = performance.now();
    timing.responses = 1;
    return decode(body, head);
  }

  close(): void {
    this.#connection.close();
    this.#sessions.forget(this);
  }
}
