/**
 * The LLM client (--service-kind openai): POST {url}/{endpoint} with a JSON
 * payload, over the fast HTTP/1.1 client, for every API of the endpoint
 * table (lib/input/llm_endpoints.ts: OpenAI's chat, completions, embeddings,
 * rankings and Responses, Anthropic's Messages, Triton's, TGI's and SGLang's
 * generate, the template endpoint), each answer format read by its function
 * of _llm_answers.ts. A streamed answer (`text/event-stream`) is parsed as it
 * arrives: the first event with output is the first token, every event with
 * output a response, and the API's last event (`data: [DONE]`,
 * `response.completed`, `message_stop`, ...) ends the stream (one that ends
 * without it failed). Token counts come from the server's usage when it
 * sends one, else the tokenizer counts the text when the level ends, else
 * the chunks count; the session writes what it saw into the request's
 * TokenTiming.
 */
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { PAYLOAD } from "../input/llm_data.ts";
import { endpointDef, type EndpointType, endpointTypeOf } from "../input/llm_endpoints.ts";
import type { ChatTemplate, Tokenizer } from "../input/tokenizer.ts";
import type { TokenTiming } from "../types/timing.ts";
import { ConnectionError, InferError, ProtocolError } from "./errors.ts";
import { type Http1Connection, isSuccess } from "./http1/mod.ts";
import {
  fixedModelInfo,
  type HttpClientOptions,
  HttpSessions,
  HttpTarget,
  isObject,
  type JsonObject,
  PreparedHttpRequest,
  preview,
  readServerError,
} from "./_http_session.ts";
import { SseParser } from "./sse.ts";
import { type AnswerReader, answerReader, type Reading } from "./_llm_answers.ts";
import type { TemplateFields } from "./plan.ts";
import { CurlResponses, responseOutputs } from "./_curl_responses.ts";
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
  /** The API (--endpoint-type); default: the API of the path, else chat. */
  endpointType?: EndpointType;
  /** --endpoint-type template: where the answers hold the text and the counts. */
  template?: TemplateFields;
  /** Counts prompts (once per distinct request) and keeps output texts for counting. */
  tokenizer?: Tokenizer;
  /** --apply-chat-template: a chat prompt's count is of the template rendered over its messages. */
  chatTemplate?: ChatTemplate;
  /** Several models in one run (-m A,B): each timing names its request's model. */
  perModel?: boolean;
  /** Several servers (-u A,B): the sessions' connections go to each in turn; absent: `url`. */
  urls?: readonly string[];
}

/** The event a stream of each API ends with; absent: it ends with the body (Triton, template). */
const LAST_EVENT: Partial<Record<EndpointType, string>> = {
  chat: "data: [DONE]",
  completions: "data: [DONE]",
  embeddings: "data: [DONE]",
  rankings: "data: [DONE]",
  rerank: "data: [DONE]",
  responses: "response.completed (or response.incomplete)",
  messages: "message_stop",
  huggingface_generate: "its last event (generated_text)",
  sglang_generate: "data: [DONE]",
};

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

/** The text of a request body the tokenizer counts: messages, prompt, text_input or input. */
export function promptText(body: JsonObject): string {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) value.forEach(add);
    else if (isObject(value)) {
      if (typeof value.text === "string") texts.push(value.text);
      else add(value.content);
    }
  };
  add(body.messages ?? body.prompt ?? body.text_input ?? body.input ?? body.inputs ?? body.text);
  return texts.join("\n");
}

/** What an event of type "error" says: its error's message, else its data. */
function errorOfEvent(data: string): string {
  try {
    const body = JSON.parse(data);
    return (isObject(body) ? errorMessage(body) : undefined) ?? data;
  } catch {
    return data;
  }
}

interface SessionOptions {
  /** Which of the client's URLs the session's connection goes to (the request bytes for it). */
  route: number;
  /** Answers keep their text for the tokenizer, which counts it when the level ends. */
  tokenizer: Tokenizer | undefined;
  /** What a stream must end with, for the error when it does not. */
  lastEvent: string | undefined;
  embeddings: boolean;
  read: AnswerReader;
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
  /** When the piece being parsed was read: the time of every event it completes. */
  #pieceMs = 0;
  readonly #onData = (data: Uint8Array): void => {
    this.#pieceMs = performance.now();
    this.#parser.push(data);
  };
  /** With the export on: each piece is also a response as perf_analyzer records it. */
  readonly #exported = new CurlResponses(RESPONSE_OUTPUT);
  readonly #onDataExported = (data: Uint8Array): void => {
    this.#pieceMs = performance.now();
    this.#exported.piece(data, this.#pieceMs);
    this.#parser.push(data);
  };
  // The request in flight, as the event handler sees it.
  #timing: TokenTiming | undefined;
  #options: InferOptions | undefined;
  #events: string[] | undefined;
  #onOutputs: InferOptions["onOutputs"];
  #done = false;
  #error: string | undefined;
  readonly #keepText: boolean;
  readonly #lastEvent: string | undefined;
  readonly #embeddings: boolean;
  readonly #read: AnswerReader;
  readonly #route: number;
  readonly #reading: Reading = { text: "", reasoning: "", output: false, end: false, sofar: "" };

  constructor(connection: Http1Connection, sessions: HttpSessions, options: SessionOptions) {
    this.#connection = connection;
    this.#sessions = sessions;
    this.#keepText = options.tokenizer !== undefined && !options.embeddings;
    this.#lastEvent = options.lastEvent;
    this.#embeddings = options.embeddings;
    this.#read = options.read;
    this.#route = options.route;
    this.#parser = new SseParser((data, type) => {
      // An event of type "error" (Anthropic's) is the server's error whatever its data says.
      if (type === "error") this.#error ??= errorOfEvent(data);
      else this.#event(data, this.#pieceMs);
    });
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
    if (request instanceof PreparedLlmRequest) {
      t.inputTokens = request.inputTokens;
      t.requestedTokens = request.requestedTokens;
      t.model = request.model;
    } else {
      t.inputTokens = -1;
      t.requestedTokens = -1;
    }
    t.usage = false;
    t.serverInputTokens = -1;
    t.secondResponse = undefined;
    t.lastResponse = undefined;
    t.reasoningChunks = 0;
    t.reasoningUsage = -1;
    t.cachedTokens = -1;
    if (t.chunkTimes === undefined) t.chunkTimes = [];
    else t.chunkTimes.length = 0;
    t.outputText = this.#keepText ? "" : undefined;
    t.reasoningText = t.outputText;
    this.#timing = t;
    this.#options = options;
    this.#events = options?.decodeOutputs === true ? [] : undefined;
    this.#onOutputs = options?.decodeOutputs === true ? options.onOutputs : undefined;
    this.#done = false;
    this.#error = undefined;
    this.#reading.sofar = "";
    const connection = this.#connection;
    t.start = performance.now();
    const bytes = this.#route === 0
      ? request.bytes
      : (request as PreparedLlmRequest).routes[this.#route - 1];
    const head = await connection.send(bytes, t);
    if (!isSuccess(head.status)) throw await readServerError(connection, head.status, t);
    const onOutputs = this.#onOutputs;
    if (EVENT_STREAM.test(head.contentType)) {
      this.#parser.reset();
      if (onOutputs !== undefined) this.#exported.begin(onOutputs);
      try {
        await connection.streamBody(onOutputs ? this.#onDataExported : this.#onData);
      } catch (error) {
        // Some servers (llama.cpp) close the connection right after the last event instead of
        // ending the chunked body: once [DONE] arrived the answer is complete.
        if (!(this.#done && error instanceof ConnectionError)) throw error;
      }
      t.end = performance.now();
      t.streamed = true;
      if (onOutputs !== undefined) this.#exported.end(t.end);
    } else {
      const bytes = await connection.readBody();
      t.end = performance.now();
      t.streamed = false;
      // perf_analyzer records an answer that is not streamed as one response, its body.
      onOutputs?.(responseOutputs(RESPONSE_OUTPUT, bytes), t.end);
      this.#event(decoder.decode(bytes), t.end);
    }
    if (this.#error !== undefined) {
      throw new InferError(`Server sent an error: ${this.#error}`, head.status);
    }
    if (t.streamed && this.#lastEvent !== undefined && !this.#done) {
      throw new InferError(`The stream ended without ${this.#lastEvent}`, head.status);
    }
    if (!t.usage) t.outputTokens = this.#embeddings ? 0 : t.responses;
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

  /** One streamed event's data (or the whole body of an answer that is not streamed), arrived `now`. */
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
    // Hugging Face TEI's rerank answers with a bare array of scores.
    if (Array.isArray(body) && body.length > 0 && this.#embeddings) body = { rankings: body };
    if (!isObject(body)) throw new ProtocolError(`Expected a JSON object, got ${preview(data)}`);
    this.#events?.push(data);
    const t = this.#timing!;
    const error = errorMessage(body);
    if (error !== undefined) {
      this.#error ??= error;
      return;
    }
    const out = this.#reading;
    out.text = "";
    out.reasoning = "";
    out.output = false;
    out.end = false;
    out.error = undefined;
    this.#read(body, out, t);
    if (out.error !== undefined) this.#error ??= out.error;
    if (out.output) {
      if (t.responses === 0) t.firstResponse = now;
      else if (t.responses === 1) t.secondResponse = now;
      t.lastResponse = now;
      t.responses++;
      t.chunkTimes!.push(now);
      if (t.outputText !== undefined) t.outputText += out.text;
      if (out.reasoning !== "") {
        t.reasoningChunks!++;
        if (t.reasoningText !== undefined) t.reasoningText += out.reasoning;
      }
      this.#options?.onResponse?.();
    }
    if (out.end) this.#done = true;
  }
}

/**
 * A request with its prompt's token count, when a tokenizer counted it, the
 * model it names, when a run sends to several, and its bytes for each URL
 * after the first, when there are several.
 */
class PreparedLlmRequest extends PreparedHttpRequest {
  constructor(
    bytes: Uint8Array,
    readonly inputTokens: number,
    options: { model?: string; routes: readonly Uint8Array[]; requestedTokens: number },
  ) {
    super(bytes);
    this.model = options.model;
    this.routes = options.routes;
    this.requestedTokens = options.requestedTokens;
  }
  readonly model: string | undefined;
  readonly routes: readonly Uint8Array[];
  /** The output length the body asks for (AIPerf's requested OSL), else -1. */
  readonly requestedTokens: number;
}

/**
 * The output length a body asks for, where its API keeps it: OpenAI's
 * max_tokens (max_completion_tokens, the Responses API's max_output_tokens),
 * TGI's parameters and SGLang's sampling_params max_new_tokens; else -1.
 */
function requestedTokensOf(body: JsonObject): number {
  const nested = (field: string) => {
    const value = body[field];
    return isObject(value) ? value.max_new_tokens : undefined;
  };
  const n = body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens ??
    nested("parameters") ?? nested("sampling_params");
  return typeof n === "number" && n >= 0 ? n : -1;
}

export class OpenAiClient implements InferenceClient {
  readonly protocol = "http" as const;
  /** One per URL (-u A,B), each with the path after it and its sessions' options. */
  readonly #routes: ReadonlyArray<
    { target: HttpTarget; path: string; sessions: HttpSessions; options: SessionOptions }
  >;
  /** The route of the next session opened: round robin over the URLs. */
  #next = 0;
  readonly #tokenizer: Tokenizer | undefined;
  readonly #chatTemplate: ChatTemplate | undefined;
  readonly #perModel: boolean;

  constructor(options: OpenAiClientOptions) {
    const endpoint = options.endpoint.replace(/^\/+/, "");
    this.#tokenizer = options.tokenizer;
    const type = options.endpointType ?? endpointTypeOf(endpoint) ?? "chat";
    const def = endpointDef(type);
    const read = answerReader(def.answer, options.template);
    this.#routes = (options.urls ?? [options.url]).map((url, route) => {
      const target = new HttpTarget({ ...options, url });
      return {
        target,
        path: `${target.basePath}/${endpoint}`,
        sessions: new HttpSessions(target.endpoint, "an OpenAI client"),
        options: {
          route,
          tokenizer: options.tokenizer,
          lastEvent: LAST_EVENT[type],
          // Embeddings and rankings answer without tokens: they count only their prompt.
          embeddings: def.noTokens === true,
          read,
        },
      };
    });
    this.#chatTemplate = options.chatTemplate;
    this.#perModel = options.perModel ?? false;
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
    const headers = { "Content-Type": "application/json", ...request.headers };
    const text = payloadOf(request);
    const body = encoder.encode(text);
    const [bytes, ...routes] = this.#routes.map((r) => r.target.post(r.path, { headers, body }));
    if (this.#tokenizer === undefined && !this.#perModel && routes.length === 0) {
      return new PreparedHttpRequest(bytes);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const counted = isObject(json) && this.#tokenizer !== undefined;
    const model = this.#perModel && isObject(json) && typeof json.model === "string"
      ? json.model
      : undefined;
    return new PreparedLlmRequest(bytes, counted ? this.#inputTokens(json as JsonObject) : -1, {
      ...(model === undefined ? {} : { model }),
      routes,
      requestedTokens: isObject(json) ? requestedTokensOf(json) : -1,
    });
  }

  /** The prompt's tokens: of the rendered chat template where applied, else of its own text. */
  #inputTokens(body: JsonObject): number {
    const template = this.#chatTemplate;
    const text = template !== undefined && Array.isArray(body.messages)
      ? template.render(body.messages)
      : promptText(body);
    return this.#tokenizer!.count(text);
  }

  openSession(): Promise<InferSession> {
    const { sessions, options } = this.#routes[this.#next++ % this.#routes.length];
    return sessions.open((connection) => new OpenAiSession(connection, sessions, options));
  }

  close(): Promise<void> {
    for (const { sessions } of this.#routes) sessions.closeAll();
    return Promise.resolve();
  }
}
