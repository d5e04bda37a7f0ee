/**
 * KServe v2 / Triton gRPC front end of the reference server: health,
 * metadata, model configuration, statistics, system shared memory, trace
 * settings, unary ModelInfer and the ModelStreamInfer bidirectional stream,
 * with decoupled models answering a request with several responses.
 *
 * Runs on the project's own HTTP/2 layer (lib/protocol/grpc/http2.ts): under
 * Deno 2.9 the node:http2 server, and so @grpc/grpc-js, aborted the process
 * when loaded clients disconnected. Plain TCP and TLS use Deno's listeners;
 * mutual TLS uses node:tls, the one Deno API that requests client certificates.
 */
import type { Tensor } from "../types/tensor.ts";
import {
  headerBlock,
  Http2Session,
  type Http2Session as Session,
  type Http2Stream,
  type StreamHandler,
  type Transport,
} from "../protocol/grpc/http2.ts";
import { connTransport, pump, pumpSocket, socketTransport } from "../protocol/grpc/transport.ts";
import {
  compress,
  type Compression,
  decompress,
  encodeGrpcMessage,
  frameMessage,
  GrpcFramingError,
  MessageReader,
  SERVICE_PATH,
  Status,
} from "../protocol/grpc/wire.ts";
import type { ModelRepository } from "./repository.ts";
import { realClock } from "./model.ts";
import { SharedMemoryRegistry } from "./shm.ts";
import { TraceSettingsStore } from "./trace.ts";
import { PREDICTION_SERVICE } from "../protocol/tfserving.ts";

import {
  FINAL,
  GrpcStatusError,
  idOf,
  InferCall,
  InferenceService,
  NOT_FINAL,
  ServerIdentity,
  statusOf,
} from "./_grpc_service.ts";

export type { ServerIdentity } from "./_grpc_service.ts";

export interface GrpcTlsOptions {
  /** PEM certificate chain and private key of the server. */
  cert: string;
  key: string;
  /** PEM CAs of accepted client certificates; when set, clients must present one (mutual TLS). */
  clientCaCerts?: string[];
}

export interface GrpcServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  tls?: GrpcTlsOptions;
  /**
   * The system shared-memory regions, shared with the other front ends.
   * Default: regions of this front end's own, unregistered when it closes.
   */
  sharedMemory?: SharedMemoryRegistry;
  /** The trace settings, shared with the other front ends. Default: this front end's own. */
  trace?: TraceSettingsStore;
}

/** What arrived on the wire, for tests that check the client's framing (compression). */
export interface WireStats {
  /** Request messages received. */
  messages: number;
  /** Compressed request messages by grpc-encoding. */
  compressed: Record<string, number>;
  /** Custom metadata of the latest call that had any (-H). */
  metadata: Record<string, string>;
}

export interface GrpcServer {
  readonly port: number;
  readonly wire: WireStats;
  /** Fails streams in flight, closes every connection and the listener. */
  close(): Promise<void>;
}

const SUPPORTED_ENCODINGS = new Set(["identity", "gzip", "deflate"]);
/** Request headers that are protocol, not user metadata. */
const STANDARD_HEADERS = new Set(["te", "user-agent", "grpc-timeout", "content-length"]);
const ACCEPT_ENCODING = "identity,deflate,gzip";

function responseHeaders(encoding: Compression): Uint8Array {
  const fields: Array<[string, string]> = [
    [":status", "200"],
    ["content-type", "application/grpc"],
    ["grpc-accept-encoding", ACCEPT_ENCODING],
  ];
  if (encoding !== "none") fields.push(["grpc-encoding", encoding]);
  return headerBlock(fields);
}

const RESPONSE_HEADERS: Record<Compression, Uint8Array> = {
  none: responseHeaders("none"),
  gzip: responseHeaders("gzip"),
  deflate: responseHeaders("deflate"),
};
const TRAILERS_OK = headerBlock([["grpc-status", "0"]]);

/** Trailers-only response: the status without any message. */
function errorBlock(status: number, message: string, withHeaders: boolean): Uint8Array {
  const fields: Array<[string, string]> = withHeaders
    ? [[":status", "200"], ["content-type", "application/grpc"]]
    : [];
  fields.push(["grpc-status", String(status)], ["grpc-message", encodeGrpcMessage(message)]);
  return headerBlock(fields);
}

const UNARY_METHODS = new Set([
  "ServerLive",
  "ServerReady",
  "ModelReady",
  "ServerMetadata",
  "ModelMetadata",
  "ModelConfig",
  "ModelStatistics",
  "ModelInfer",
  "SystemSharedMemoryStatus",
  "SystemSharedMemoryRegister",
  "SystemSharedMemoryUnregister",
  "TraceSetting",
]);
const STREAM_METHOD = "ModelStreamInfer";

/** One RPC on one HTTP/2 stream. */
class ServerCall implements StreamHandler {
  readonly #session: Session;
  readonly #service: InferenceService;
  readonly #wire: WireStats;
  readonly #reader: MessageReader;
  readonly #arrival = performance.now();
  #method = "";
  #encoding = "identity";
  #responseEncoding: Compression = "none";
  #stream: Http2Stream | undefined;
  #unary: Uint8Array | undefined;
  #headersSent = false;
  #done = false;
  #clientEnded = false;
  #pending = 0;
  /** Cancels the pending response timers of decoupled models. */
  readonly #timers = new Set<() => void>();

  constructor(session: Session, service: InferenceService, wire: WireStats) {
    this.#session = session;
    this.#service = service;
    this.#wire = wire;
    this.#reader = new MessageReader((message, compressed) => this.#message(message, compressed));
  }

  headers(stream: Http2Stream, fields: readonly string[], endStream: boolean): void {
    if (this.#stream !== undefined) {
      // Trailers from the client end its side of the stream; nothing else is expected.
      if (endStream) this.#end();
      return;
    }
    this.#stream = stream;
    let method = "";
    let path = "";
    let contentType = "";
    let accept = "";
    for (let i = 0; i < fields.length; i += 2) {
      const value = fields[i + 1];
      switch (fields[i]) {
        case ":method":
          method = value;
          break;
        case ":path":
          path = value;
          break;
        case "content-type":
          contentType = value;
          break;
        case "grpc-encoding":
          this.#encoding = value;
          break;
        case "grpc-accept-encoding":
          accept = value;
          break;
        default:
          if (!fields[i].startsWith(":") && !STANDARD_HEADERS.has(fields[i])) {
            this.#wire.metadata[fields[i]] = value;
          }
      }
    }
    if (method !== "POST" || !contentType.startsWith("application/grpc")) {
      this.#finish(headerBlock([[":status", method !== "POST" ? "405" : "415"]]));
      return;
    }
    if (!SUPPORTED_ENCODINGS.has(this.#encoding)) {
      this.#fail(
        new GrpcStatusError(Status.UNIMPLEMENTED, `Unsupported grpc-encoding "${this.#encoding}"`),
      );
      return;
    }
    // Answer in the client's encoding when it accepts that encoding back.
    const encoding = this.#encoding as Compression | "identity";
    if (encoding !== "identity" && accept.split(",").some((a) => a.trim() === encoding)) {
      this.#responseEncoding = encoding;
    }
    const tfserving = path.startsWith(PREDICTION_SERVICE)
      ? path.slice(PREDICTION_SERVICE.length)
      : "";
    // KServe methods go by name; TF Serving's by path, so the two never mix.
    const name = path.startsWith(SERVICE_PATH)
      ? path.slice(SERVICE_PATH.length)
      : this.#service.tfserving.answers(tfserving)
      ? path
      : "";
    if (!UNARY_METHODS.has(name) && name !== STREAM_METHOD && name !== path) {
      this.#fail(new GrpcStatusError(Status.UNIMPLEMENTED, `Method not found: ${path}`));
      return;
    }
    this.#method = name;
    if (endStream) this.#end();
  }

  data(_stream: Http2Stream, data: Uint8Array, endStream: boolean): void {
    if (this.#done || this.#method === "") return;
    try {
      this.#reader.push(data);
    } catch (error) {
      this.#fail(statusOf(error));
      return;
    }
    if (endStream) this.#end();
  }

  reset(): void {
    this.#done = true;
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
  }

  #message(message: Uint8Array, compressed: boolean): void {
    if (this.#done) return;
    this.#wire.messages++;
    let body = message;
    if (compressed) {
      const encoding = this.#encoding;
      this.#wire.compressed[encoding] = (this.#wire.compressed[encoding] ?? 0) + 1;
      if (encoding === "identity") {
        throw new GrpcFramingError("A compressed message arrived without grpc-encoding");
      }
      body = decompress(encoding, message);
    } else {
      // The payload is a view of the connection's read buffer; the model keeps inputs past this call.
      body = message.slice();
    }
    if (this.#method === STREAM_METHOD) {
      this.#streamInfer(body);
      return;
    }
    if (this.#unary !== undefined) {
      throw new GrpcFramingError(`${this.#method} takes one request message, got more`);
    }
    this.#unary = body;
  }

  /** The client finished sending. */
  #end(): void {
    if (this.#done || this.#clientEnded) return;
    this.#clientEnded = true;
    if (this.#method === STREAM_METHOD) {
      this.#maybeFinishStream();
      return;
    }
    const message = this.#unary ?? new Uint8Array(0);
    if (this.#method.startsWith(PREDICTION_SERVICE)) {
      this.#service.tfserving.call(
        this.#method.slice(PREDICTION_SERVICE.length),
        message,
        this.#arrival,
      ).then(
        (response) => {
          if (!this.#done) this.#reply(response);
        },
        (error) => this.#fail(statusOf(error)),
      );
      return;
    }
    if (this.#method !== "ModelInfer") {
      try {
        this.#reply(this.#service.simple(this.#method, message));
      } catch (error) {
        this.#fail(statusOf(error));
      }
      return;
    }
    let call: InferCall;
    try {
      call = this.#service.inferCall(message, this.#arrival);
    } catch (error) {
      this.#fail(statusOf(error));
      return;
    }
    if (call.model.spec.decoupled !== undefined) {
      this.#fail(
        new GrpcStatusError(
          Status.UNIMPLEMENTED,
          "ModelInfer RPC doesn't support models with decoupled transaction policy",
        ),
      );
      return;
    }
    this.#service.run(call).then(
      (outputs) => {
        if (!this.#done) this.#reply(this.#service.inferResponse(call, outputs));
      },
      (error) => this.#fail(statusOf(error)),
    );
  }

  #reply(message: Uint8Array): void {
    this.#sendMessage(message);
    this.#finish(TRAILERS_OK);
  }

  #streamInfer(message: Uint8Array): void {
    const service = this.#service;
    let call: InferCall;
    try {
      call = service.inferCall(message, performance.now());
    } catch (error) {
      this.#sendMessage(
        service.streamResponse(undefined, { message: statusOf(error).message, id: idOf(message) }),
      );
      return;
    }
    this.#pending++;
    service.run(call).then(
      (outputs) => this.#respond(call, outputs),
      (error) => {
        this.#pending--;
        if (this.#done) return;
        this.#sendMessage(
          service.streamResponse(undefined, { message: statusOf(error).message, id: call.id }),
        );
        this.#maybeFinishStream();
      },
    );
  }

  /** Sends a stream request's responses: one, or a decoupled model's N with gaps. */
  #respond(call: InferCall, outputs: Tensor[]): void {
    const service = this.#service;
    const decoupled = call.model.spec.decoupled;
    if (decoupled === undefined) {
      this.#pending--;
      if (this.#done) return;
      this.#sendMessage(service.streamResponse(service.inferResponse(call, outputs, FINAL)));
      this.#maybeFinishStream();
      return;
    }
    const { responses, gapMs } = decoupled;
    const send = (index: number) => {
      if (this.#done) return;
      if (index < responses) {
        const last = index === responses - 1 && !call.emptyFinal;
        this.#sendMessage(
          service.streamResponse(service.inferResponse(call, outputs, last ? FINAL : NOT_FINAL)),
        );
        if (index + 1 < responses) {
          const cancel = realClock.setTimer(() => {
            this.#timers.delete(cancel);
            send(index + 1);
          }, gapMs);
          this.#timers.add(cancel);
          return;
        }
      }
      if (call.emptyFinal) {
        this.#sendMessage(service.streamResponse(service.inferResponse(call, [], FINAL)));
      }
      this.#pending--;
      this.#maybeFinishStream();
    };
    send(0);
  }

  #maybeFinishStream(): void {
    if (this.#clientEnded && this.#pending === 0 && !this.#done) this.#finish(TRAILERS_OK);
  }

  #sendMessage(message: Uint8Array): void {
    const stream = this.#stream!;
    const session = this.#session;
    if (!this.#headersSent) {
      this.#headersSent = true;
      session.sendHeaders(stream, RESPONSE_HEADERS[this.#responseEncoding], false);
    }
    const compressed = this.#responseEncoding !== "none";
    const body = compressed ? compress(this.#responseEncoding, message) : message;
    // Prefix and message in one DATA frame, as gRPC's own servers send them.
    session.sendData(stream, frameMessage(body, compressed), false);
  }

  #fail(error: GrpcStatusError): void {
    this.#finish(errorBlock(error.status, error.message, !this.#headersSent));
  }

  #finish(block: Uint8Array): void {
    if (this.#done) return;
    this.#done = true;
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
    this.#session.sendHeaders(this.#stream!, block, true);
  }
}

/** Starts the gRPC front end over `repository`. */
export async function serveGrpc(
  repository: ModelRepository,
  identity: ServerIdentity,
  options: GrpcServerOptions,
): Promise<GrpcServer> {
  const sharedMemory = options.sharedMemory ?? new SharedMemoryRegistry();
  const service = new InferenceService(repository, {
    identity,
    sharedMemory,
    trace: options.trace ?? new TraceSettingsStore(),
  });
  const wire: WireStats = { messages: 0, compressed: {}, metadata: {} };
  const sessions = new Set<Http2Session>();
  const connections = new Set<Promise<void>>();
  const session = (transport: Transport) => {
    const s: Http2Session = new Http2Session(transport, {
      role: "server",
      onStream: () => new ServerCall(s, service, wire),
    });
    sessions.add(s);
    return s;
  };
  const track = (done: Promise<void>, s: Http2Session) => {
    const tracked = done.finally(() => {
      sessions.delete(s);
      connections.delete(tracked);
    });
    connections.add(tracked);
  };

  const closeSessions = async () => {
    for (const s of sessions) s.close();
    await Promise.all(connections);
    if (options.sharedMemory === undefined) sharedMemory.close();
  };

  const mutual = options.tls?.clientCaCerts;
  if (options.tls !== undefined && mutual !== undefined) {
    // Imported here: a static import of a Node built-in would load it at every start-up.
    const tls = await import("node:tls");
    const server = tls.createServer({
      key: options.tls.key,
      cert: options.tls.cert,
      ca: mutual,
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ["h2"],
    }, (socket) => {
      const s = session(socketTransport(socket));
      track(pumpSocket(socket, s), s);
    });
    // A client that fails the handshake (no or wrong certificate) only loses its own connection.
    server.on("tlsClientError", () => {});
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.hostname, () => resolve());
    });
    const address = server.address();
    return {
      port: typeof address === "object" && address !== null ? address.port : options.port,
      wire,
      async close() {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await closeSessions();
        await closed;
      },
    };
  }

  const listener = options.tls === undefined
    ? Deno.listen({ hostname: options.hostname, port: options.port })
    : Deno.listenTls({
      hostname: options.hostname,
      port: options.port,
      cert: options.tls.cert,
      key: options.tls.key,
      alpnProtocols: ["h2"],
    });
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return;
      }
      if (options.tls === undefined) (conn as Deno.TcpConn).setNoDelay(true);
      const s = session(connTransport(conn));
      track(pump(conn, s), s);
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    wire,
    async close() {
      listener.close();
      await accepting;
      await closeSessions();
    },
  };
}
