/**
 * OpenAI-compatible client (--service-kind openai): POST {url}/{endpoint}
 * (v1/chat/completions, v1/completions) with a JSON payload, over the fast
 * HTTP/1.1 client. A streamed answer (`text/event-stream`, `"stream": true`)
 * is parsed as it arrives: the first chunk with output is the first token,
 * every chunk with output a response, `data: [DONE]` the end. Token counts
 * come from the `usage` field when the server sends one, else from the
 * chunks; the session writes them into the request's TokenTiming.
 */
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { PAYLOAD } from "../input/llm_data.ts";
import type { TokenTiming } from "../types/timing.ts";
import { ConnectionError, InferError, ProtocolError } from "./errors.ts";
import type { Http1Connection } from "./http1/mod.ts";
import {
  fixedModelInfo,
  type HttpClientOptions,
  HttpSessions,
  HttpTarget,
  isObject,
  isSuccess,
  type JsonObject,
  PreparedHttpRequest,
  preview,
  readServerError,
} from "./_http_session.ts";
import { SseParser } from "./sse.ts";
import type {
  InferenceClient,
  InferOptions,
  InferSession,
  OutputTensors,
  PreparedRequest,
} from "./types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { ModelInfo, ServerInfo } from "../types/model.ts";
import type { RequestTiming } from "../types/timing.ts";

/** The output that decoded responses carry: the body, or the data of every event. */
export const RESPONSE_OUTPUT = "response";

export interface OpenAiClientOptions extends HttpClientOptions {
  /** Path after the URL, e.g. "v1/chat/completions". */
  endpoint: string;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const EVENT_STREAM = /^\s*text\/event-stream/i;
const DONE = "[DONE]";

/** The request's JSON body, from its "payload" input (one BYTES element). */
export function payloadOf(request: InferRequest): string {
  const input = request.inputs.find((t) => t.name === PAYLOAD);
  if (input === undefined || input.datatype !== "BYTES") {
    throw new TypeError(`An OpenAI request needs a BYTES input "${PAYLOAD}"`);
  }
  const [element] = decodeBytesElements(input.data);
  if (element === undefined) throw new TypeError(`Input "${PAYLOAD}" holds no element`);
  return decoder.decode(element);
}

const nonEmpty = (value: unknown) => typeof value === "string" && value !== "";

/**
 * Whether a completion chunk or response carries output: completion `text`,
 * or chat `content` (or `reasoning_content`) of a delta or message.
 */
function hasOutput(body: JsonObject): boolean {
  const choices = body.choices;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (!isObject(choice)) continue;
    if (nonEmpty(choice.text)) return true;
    const part = isObject(choice.delta) ? choice.delta : choice.message;
    if (isObject(part) && (nonEmpty(part.content) || nonEmpty(part.reasoning_content))) return true;
  }
  return false;
}

function errorMessage(body: JsonObject): string | undefined {
  const error = body.error;
  if (typeof error === "string") return error;
  if (isObject(error)) {
    return typeof error.message === "string" ? error.message : JSON.stringify(error);
  }
  return undefined;
}

class OpenAiSession implements InferSession {
  readonly #connection: Http1Connection;
  readonly #sessions: HttpSessions;
  readonly #parser: SseParser;
  readonly #onData = (data: Uint8Array): void => this.#parser.push(data);
  // The request in flight, as the event handler sees it.
  #timing: TokenTiming | undefined;
  #options: InferOptions | undefined;
  #events: string[] | undefined;
  #done = false;
  #error: string | undefined;

  constructor(connection: Http1Connection, sessions: HttpSessions) {
    this.#connection = connection;
    this.#sessions = sessions;
    this.#parser = new SseParser((data) => this.#event(data, performance.now()));
  }

  async infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    if (!(request instanceof PreparedHttpRequest)) throw this.#sessions.foreignRequest();
    const t = timing as TokenTiming;
    t.responses = 0;
    t.firstResponse = undefined;
    t.outputTokens = 0;
    t.inputTokens = -1;
    t.usage = false;
    this.#timing = t;
    this.#options = options;
    this.#events = options?.decodeOutputs === true ? [] : undefined;
    this.#done = false;
    this.#error = undefined;
    const connection = this.#connection;
    t.start = performance.now();
    const head = await connection.send(request.bytes, t);
    if (!isSuccess(head.status)) throw await readServerError(connection, head.status, t);
    if (EVENT_STREAM.test(head.contentType)) {
      this.#parser.reset();
      try {
        await connection.streamBody(this.#onData);
      } catch (error) {
        // Some servers (llama.cpp) close the connection right after the last event instead of
        // ending the chunked body: once [DONE] arrived the answer is complete.
        if (!(this.#done && error instanceof ConnectionError)) throw error;
      }
      t.end = performance.now();
    } else {
      const body = decoder.decode(await connection.readBody());
      t.end = performance.now();
      this.#event(body, t.end);
    }
    if (this.#error !== undefined) {
      throw new InferError(`Server sent an error: ${this.#error}`, head.status);
    }
    if (!t.usage) t.outputTokens = t.responses;
    const events = this.#events;
    if (events === undefined) return undefined;
    return [{
      name: RESPONSE_OUTPUT,
      datatype: "BYTES",
      shape: [events.length],
      data: encodeBytesElements(events),
    }];
  }

  close(): void {
    this.#connection.close();
    this.#sessions.forget(this);
  }

  /** One streamed event (or the whole body of an answer that is not streamed), arrived `now`. */
  #event(data: string, now: number): void {
    if (this.#done) return;
    if (data === DONE) {
      this.#done = true;
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(data);
    } catch {
      throw new ProtocolError(`Invalid JSON from the server: ${preview(data)}`);
    }
    if (!isObject(body)) throw new ProtocolError(`Expected a JSON object, got ${preview(data)}`);
    this.#events?.push(data);
    const t = this.#timing!;
    const error = errorMessage(body);
    if (error !== undefined) {
      this.#error ??= error;
      return;
    }
    if (hasOutput(body)) {
      if (t.responses === 0) t.firstResponse = now;
      t.responses++;
      this.#options?.onResponse?.();
    }
    const usage = body.usage;
    if (isObject(usage) && typeof usage.completion_tokens === "number") {
      t.usage = true;
      t.outputTokens = usage.completion_tokens;
      t.inputTokens = typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : -1;
    }
  }
}

export class OpenAiClient implements InferenceClient {
  readonly protocol = "http" as const;
  readonly #target: HttpTarget;
  readonly #path: string;
  readonly #sessions: HttpSessions;

  constructor(options: OpenAiClientOptions) {
    this.#target = new HttpTarget(options);
    this.#path = `${this.#target.basePath}/${options.endpoint.replace(/^\/+/, "")}`;
    this.#sessions = new HttpSessions(this.#target.endpoint, "an OpenAI client");
  }

  /** OpenAI-compatible servers have no server metadata; the run learns of them from requests. */
  serverInfo(): Promise<ServerInfo> {
    return Promise.resolve({ name: "openai", version: "", extensions: [] });
  }

  /** Requests are JSON payloads: one BYTES input "payload", one BYTES output "response". */
  modelInfo(model: string, version: string): Promise<ModelInfo> {
    return Promise.resolve(fixedModelInfo(model, version, {
      platform: "openai",
      inputs: [{ name: PAYLOAD, datatype: "BYTES", dims: [1] }],
      outputs: [{ name: RESPONSE_OUTPUT, datatype: "BYTES", dims: [-1] }],
    }));
  }

  prepare(request: InferRequest): PreparedRequest {
    const headers = { "Content-Type": "application/json" };
    const body = encoder.encode(payloadOf(request));
    return new PreparedHttpRequest(this.#target.post(this.#path, { headers, body }));
  }

  openSession(): Promise<InferSession> {
    return this.#sessions.open((connection) => new OpenAiSession(connection, this.#sessions));
  }

  close(): Promise<void> {
    this.#sessions.closeAll();
    return Promise.resolve();
  }
}
