/**
 * TorchServe client (--service-kind torchserve): `POST /predictions/{model}`
 * over the fast HTTP/1.1 client, the body being the file that the JSON input
 * data names, as in perf_analyzer:
 * `{"data": [{"TORCHSERVE_INPUT": ["kitten_small.jpg"]}]}` (paths relative to
 * the working directory). TorchServe has no statistics extension: reports
 * hold client-side figures only.
 */
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { InputError } from "../input/errors.ts";
import {
  buildRequest,
  type Endpoint,
  formatAddress,
  Http1Connection,
  type TlsOptions,
} from "./http1/mod.ts";
import { mergeHeaders, parseKServeUrl, serverError } from "./kserve_http.ts";
import type {
  InferenceClient,
  InferOptions,
  InferRequest,
  InferSession,
  ModelInfo,
  OutputTensors,
  PreparedRequest,
  RequestTiming,
  ServerInfo,
} from "./types.ts";

/** The input of perf_analyzer's TorchServe input data: the name of the file to send. */
export const TORCHSERVE_INPUT = "TORCHSERVE_INPUT";
/** The output decoded responses carry: the response body. */
export const TORCHSERVE_OUTPUT = "response";

export interface TorchServeClientOptions {
  /** "host:port" or "http(s)://host:port[/base/path]". */
  url: string;
  headers?: Record<string, string>;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  tls?: TlsOptions;
}

const decoder = new TextDecoder();

/** A request encoded once: the HTTP/1.1 request bytes. */
class PreparedTorchServeRequest implements PreparedRequest {
  readonly byteLength: number;
  constructor(readonly bytes: Uint8Array) {
    this.byteLength = bytes.byteLength;
  }
}

class TorchServeSession implements InferSession {
  readonly #connection: Http1Connection;
  readonly #onClose: (session: TorchServeSession) => void;

  constructor(connection: Http1Connection, onClose: (session: TorchServeSession) => void) {
    this.#connection = connection;
    this.#onClose = onClose;
  }

  async infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    if (!(request instanceof PreparedTorchServeRequest)) {
      throw new TypeError("The request was not prepared by a TorchServe client");
    }
    const connection = this.#connection;
    timing.start = performance.now();
    const head = await connection.send(request.bytes, timing);
    const failed = head.status < 200 || head.status >= 300;
    const keep = failed || options?.decodeOutputs === true;
    const body = keep ? (await connection.readBody()).slice() : undefined;
    if (!keep) await connection.skipBody();
    timing.end = performance.now();
    timing.responses = 1;
    if (failed) throw serverError(head.status, body!);
    if (body === undefined) return undefined;
    return [{
      name: TORCHSERVE_OUTPUT,
      datatype: "BYTES",
      shape: [1],
      data: encodeBytesElements([body]),
    }];
  }

  close(): void {
    this.#connection.close();
    this.#onClose(this);
  }
}

export class TorchServeClient implements InferenceClient {
  readonly protocol = "http" as const;
  readonly #endpoint: Endpoint;
  readonly #basePath: string;
  readonly #host: string;
  readonly #headers: Record<string, string>;
  readonly #sessions = new Set<TorchServeSession>();
  readonly #forget = (session: TorchServeSession): void => {
    this.#sessions.delete(session);
  };

  constructor(options: TorchServeClientOptions) {
    const { endpoint, basePath } = parseKServeUrl(options.url);
    endpoint.connectTimeoutMs = options.connectTimeoutMs;
    endpoint.requestTimeoutMs = options.requestTimeoutMs;
    if (endpoint.tls !== undefined && options.tls !== undefined) endpoint.tls = options.tls;
    this.#endpoint = endpoint;
    this.#basePath = basePath;
    this.#host = formatAddress(endpoint.hostname, endpoint.port);
    this.#headers = { ...options.headers };
  }

  /** TorchServe's inference API has no server metadata. */
  serverInfo(): Promise<ServerInfo> {
    return Promise.resolve({ name: "torchserve", version: "", extensions: [] });
  }

  /** Requests carry one file: one BYTES input naming it, the body of the response as output. */
  modelInfo(model: string, version: string): Promise<ModelInfo> {
    return Promise.resolve({
      name: model,
      version,
      platform: "torchserve",
      versions: [],
      inputs: [{ name: TORCHSERVE_INPUT, datatype: "BYTES", dims: [1] }],
      outputs: [],
      maxBatchSize: 0,
      decoupled: false,
      sequence: false,
      composingModels: [],
      responseCache: false,
    });
  }

  /** Reads the file named by the request's TORCHSERVE_INPUT (once) as the body. */
  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const input = request.inputs.find((t) => t.name === TORCHSERVE_INPUT);
    const [name] = input === undefined ? [] : decodeBytesElements(input.data);
    if (name === undefined) {
      throw new InputError(
        `TorchServe requests need input data naming the file to send: --input-data FILE.json ` +
          `with {"data": [{"${TORCHSERVE_INPUT}": ["file.jpg"]}]}`,
      );
    }
    const file = decoder.decode(name);
    let body: Uint8Array;
    try {
      body = Deno.readFileSync(file);
    } catch (error) {
      throw new InputError(
        `Cannot read "${file}", the file ${TORCHSERVE_INPUT} names (paths are relative to the ` +
          `working directory): ${(error as Error).message}`,
      );
    }
    const version = target.version === "" ? "" : `/${encodeURIComponent(target.version)}`;
    const path = `${this.#basePath}/predictions/${encodeURIComponent(target.model)}${version}`;
    return new PreparedTorchServeRequest(
      buildRequest("POST", path, {
        host: this.#host,
        headers: mergeHeaders({ "Content-Type": "application/octet-stream" }, this.#headers),
        body,
      }),
    );
  }

  async openSession(): Promise<InferSession> {
    const session = new TorchServeSession(
      await Http1Connection.open(this.#endpoint),
      this.#forget,
    );
    this.#sessions.add(session);
    return session;
  }

  close(): Promise<void> {
    for (const session of [...this.#sessions]) session.close();
    return Promise.resolve();
  }
}
