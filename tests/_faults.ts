/**
 * Faulty servers for tests/faults_test.ts: raw TCP, so that they can break
 * the protocol in ways no well-behaved server library lets them.
 */
import { type CliResult, runCli } from "./_helpers.ts";
import {
  ErrorCode,
  headerBlock,
  Http2Session,
  type Http2Stream,
} from "../lib/protocol/grpc/http2.ts";
import { decodeMessage, encodeMessage, Messages } from "../lib/protocol/grpc/messages.ts";
import { connTransport, pump } from "../lib/protocol/grpc/transport.ts";
import { frameMessage, MessageReader } from "../lib/protocol/grpc/wire.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The model every fault server serves: INT32[4] in, the same out. */
export const MODEL = "faulty";
const METADATA = JSON.stringify({
  name: MODEL,
  versions: ["1"],
  platform: "fake",
  inputs: [{ name: "IN", datatype: "INT32", shape: [4] }],
  outputs: [{ name: "OUT", datatype: "INT32", shape: [4] }],
});
const SERVER = JSON.stringify({ name: "faults", version: "1", extensions: [] });

/** A whole HTTP/1.1 response. */
export function httpResponse(
  status: number,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Uint8Array {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const fields = { "content-type": "application/json", "content-length": `${bytes.length}` };
  const head = Object.entries({ ...fields, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const headBytes = encoder.encode(`HTTP/1.1 ${status} X\r\n${head}\r\n`);
  const out = new Uint8Array(headBytes.length + bytes.length);
  out.set(headBytes);
  out.set(bytes, headBytes.length);
  return out;
}

/** A successful JSON infer answer. */
export const OK_JSON = JSON.stringify({
  model_name: MODEL,
  outputs: [{ name: "OUT", datatype: "INT32", shape: [4], data: [1, 2, 3, 4] }],
});

/**
 * What the server does with an infer request: answer with these bytes (and
 * keep the connection), or write them and close it (`close`), or never
 * answer further (`hang`, after what it wrote), each after `delayMs`.
 */
export interface Answer {
  /** Written first, one at a time, 5 ms apart. */
  parts?: Uint8Array[];
  bytes?: Uint8Array;
  close?: boolean;
  hang?: boolean;
  delayMs?: number;
}

export interface FaultServer {
  addr: string;
  /** Infer requests received (complete requests read off the wire). */
  readonly infers: number;
  stop(): Promise<void>;
}

/**
 * Accepts loopback connections on a free port, each handed to `serve` until
 * its promise settles; stop() closes the listener and every open connection.
 */
function acceptOn(serve: (conn: Deno.Conn) => Promise<void>): Omit<FaultServer, "infers"> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  let stopping: Promise<void> | undefined;
  const accepting = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serve(conn).finally(() => conns.delete(conn));
    }
  })().catch(() => {});
  return {
    addr: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    stop() {
      stopping ??= (async () => {
        listener.close();
        for (const conn of conns) {
          try {
            conn.close();
          } catch {
            // Closed by its server already.
          }
        }
        await accepting;
      })();
      return stopping;
    },
  };
}

/** Where the blank line after a request head starts (bodies are binary: search bytes). */
function headEnd(buffer: Uint8Array): number {
  for (let i = 0; i + 3 < buffer.length; i++) {
    if (buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

/** Reads HTTP/1.1 requests off `conn`: method, path and body, or undefined at EOF. */
async function* requests(conn: Deno.Conn): AsyncGenerator<{ path: string; body: Uint8Array }> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(65536);
  const more = async () => {
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    return true;
  };
  while (true) {
    let end: number;
    while ((end = headEnd(buffer)) < 0) if (!await more()) return;
    const head = decoder.decode(buffer.subarray(0, end));
    const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
    while (buffer.length < end + 4 + length) if (!await more()) return;
    const body = buffer.slice(end + 4, end + 4 + length);
    buffer = buffer.slice(end + 4 + length);
    yield { path: head.split(" ")[1]!, body };
  }
}

/** The answers of a KServe v2 server of MODEL to everything but infer requests. */
function kserveRoute(path: string): Answer {
  if (path === "/v2") return { bytes: httpResponse(200, SERVER) };
  if (path === `/v2/models/${MODEL}`) return { bytes: httpResponse(200, METADATA) };
  return { bytes: httpResponse(404, JSON.stringify({ error: `no route ${path}` })) };
}

/**
 * A KServe v2 HTTP/1.1 server of MODEL whose n-th infer request (from 1) is
 * answered as `infer(n)` says.
 */
export function kserveFaultServer(infer: (n: number) => Answer): FaultServer {
  return httpFaultServer(
    `/v2/models/${MODEL}/infer`,
    (path, n) => n === undefined ? kserveRoute(path) : infer(n),
  );
}

/**
 * A raw HTTP/1.1 server: the n-th request (from 1) to `counted` is answered
 * as `answer(path, n)` says, others as `answer(path)`.
 */
export function httpFaultServer(
  counted: string,
  answer: (path: string, n?: number) => Answer,
): FaultServer {
  let infers = 0;
  const server = acceptOn(async (conn) => {
    try {
      for await (const { path } of requests(conn)) {
        const reply = answer(path, path === counted ? ++infers : undefined);
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        for (const [i, part] of (reply.parts ?? []).entries()) {
          // Apart, so that the client reads them separately.
          if (i > 0) await new Promise((r) => setTimeout(r, 5));
          await conn.write(part);
        }
        if (reply.bytes) await conn.write(reply.bytes);
        if (reply.hang) await new Promise(() => {});
        if (reply.close) break;
      }
    } catch {
      // The client went away or the test stopped the server.
    } finally {
      try {
        conn.close();
      } catch {
        // Already closed by stop().
      }
    }
  });
  return {
    ...server,
    get infers() {
      return infers;
    },
  };
}

/** The head of a chunked server-sent-events answer. */
export const SSE_HEAD = encoder.encode(
  "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
);

/** `text` as one HTTP chunk ("" is the last chunk). */
export function httpChunk(text: string): Uint8Array {
  const bytes = encoder.encode(text);
  return encoder.encode(`${bytes.length.toString(16)}\r\n${text}\r\n`);
}

/** An OpenAI chat completion chunk carrying `content`, as an SSE event. */
export const sseToken = (content: string): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** The CLI's run against MODEL on `addr`, with JSON outputs (the ones the fault servers send). */
export const profileFaulty = (
  addr: string,
  args: string[],
  options: { timeoutMs?: number } = {},
): Promise<CliResult> =>
  runCli(["-m", MODEL, "-u", addr, "--output-tensor-format", "json", ...args], {
    timeoutMs: options.timeoutMs ?? 20_000,
  });

/** What a gRPC fault server does with the n-th ModelInfer call (from 1). */
export type GrpcFault =
  | "ok"
  /** A trailers-only answer with this gRPC status. */
  | { status: number; message: string }
  /** RST_STREAM on the call's stream. */
  | "rst_stream"
  /** GOAWAY (NO_ERROR) and a closed connection. */
  | "goaway"
  /** A DATA frame longer than the client's SETTINGS_MAX_FRAME_SIZE. */
  | "oversize_frame"
  /** A HEADERS frame whose HPACK block refers to a table entry that does not exist. */
  | "invalid_hpack"
  /** A gRPC message prefix announcing more than the client's message limit, then the end. */
  | "oversize_message"
  /** Response headers, then nothing: the call never ends. */
  | "hang";

/** An HTTP/2 frame of `type` on `stream` with `payload`. */
function rawFrame(type: number, stream: number, payload: Uint8Array, length = payload.length) {
  const frame = new Uint8Array(9 + payload.length);
  const view = new DataView(frame.buffer);
  view.setUint32(0, length << 8);
  frame[3] = type;
  frame[4] = 0x4; // END_HEADERS, ignored on DATA
  view.setUint32(5, stream);
  frame.set(payload, 9);
  return frame;
}

const GRPC_UNIMPLEMENTED = 12;

/**
 * A KServe v2 gRPC server of MODEL on inferperf's own HTTP/2 layer whose
 * n-th infer (a ModelInfer call, or a request on a ModelStreamInfer stream)
 * is answered as `infer(n)` says.
 */
export function grpcFaultServer(infer: (n: number) => GrpcFault): FaultServer {
  let infers = 0;
  const answers: Record<string, Uint8Array> = {
    ServerMetadata: encodeMessage(Messages.ServerMetadataResponse, {
      name: "faults",
      version: "1",
      extensions: [],
    }),
    ModelMetadata: encodeMessage(Messages.ModelMetadataResponse, JSON.parse(METADATA)),
  };
  const okInfer = encodeMessage(Messages.ModelInferResponse, {
    model_name: MODEL,
    outputs: [{ name: "OUT", datatype: "INT32", shape: [4] }],
    raw_output_contents: [new Uint8Array(new Int32Array([1, 2, 3, 4]).buffer)],
  });
  const okStream = encodeMessage(Messages.ModelStreamInferResponse, {
    infer_response: decodeMessage(Messages.ModelInferResponse, okInfer),
  });
  const okHeaders = headerBlock([[":status", "200"], ["content-type", "application/grpc"]]);
  const trailers = (status: number, message = "") =>
    headerBlock([
      [":status", "200"],
      ["content-type", "application/grpc"],
      ["grpc-status", `${status}`],
      ["grpc-message", message],
    ]);
  const serve = (conn: Deno.Conn) => {
    const raw = (bytes: Uint8Array) => conn.write(bytes).catch(() => {});
    /** Answers the call's n-th infer on `stream`; a ModelStreamInfer stream stays open. */
    const answerInfer = (stream: Http2Stream, options: { streaming: boolean; open: boolean }) => {
      const fault = infer(++infers);
      const headers = () => options.open || session.sendHeaders(stream, okHeaders, false);
      if (fault === "ok") {
        headers();
        session.sendData(
          stream,
          frameMessage(options.streaming ? okStream : okInfer, false),
          false,
        );
        if (!options.streaming) session.sendHeaders(stream, trailers(0), true);
      } else if (fault === "rst_stream") {
        session.resetStream(stream, ErrorCode.INTERNAL_ERROR);
      } else if (fault === "goaway") {
        session.close();
      } else if (fault === "oversize_frame") {
        raw(rawFrame(0x0, stream.id, new Uint8Array(2 ** 18 + 1)));
      } else if (fault === "invalid_hpack") {
        raw(rawFrame(0x1, stream.id, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])));
      } else if (fault === "hang") {
        headers();
      } else if (fault === "oversize_message") {
        headers();
        session.sendData(stream, new Uint8Array([0, 0x7f, 0xff, 0xff, 0xff]), false);
        if (!options.streaming) session.sendHeaders(stream, trailers(0), true);
      } else {
        session.sendHeaders(stream, trailers(fault.status, fault.message), true);
      }
    };
    const session: Http2Session = new Http2Session(connTransport(conn), {
      role: "server",
      onStream: () => {
        let method = "";
        let open = false;
        let current: Http2Stream | undefined;
        const messages = new MessageReader(() => {
          answerInfer(current!, { streaming: true, open });
          open = true;
        });
        return {
          headers(_stream, fields) {
            const path = fields[fields.indexOf(":path") + 1] ?? "";
            method = path.slice(path.lastIndexOf("/") + 1);
          },
          data(stream, data, endStream) {
            if (method === "ModelStreamInfer") {
              current = stream;
              messages.push(data);
              return;
            }
            if (!endStream) return;
            if (method === "ModelInfer") {
              answerInfer(stream, { streaming: false, open: false });
              return;
            }
            const answer = answers[method];
            if (answer === undefined) {
              session.sendHeaders(stream, trailers(GRPC_UNIMPLEMENTED, method), true);
              return;
            }
            session.sendHeaders(stream, okHeaders, false);
            session.sendData(stream, frameMessage(answer, false), false);
            session.sendHeaders(stream, trailers(0), true);
          },
          reset() {},
        };
      },
    });
    return pump(conn, session);
  };
  return {
    ...acceptOn(serve),
    get infers() {
      return infers;
    },
  };
}
