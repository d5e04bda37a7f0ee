/**
 * OpenAI-compatible front end of the reference server: /v1/models,
 * /v1/chat/completions, /v1/completions, /v1/embeddings and NIM's
 * /v1/ranking, and Triton's
 * generate extension (/v2/models/M/generate and generate_stream), for models
 * with `llm` settings; the Responses and Messages APIs and TGI's and SGLang's
 * generate speak through their wires (_llm_apis.ts). Tokens follow a schedule from the request's arrival
 * (the first after ttft_ms, then one every itl_ms +- the jitter), streamed as
 * server-sent events or answered at once, so that clients' time to first
 * token and inter-token latency have a ground truth; a share of the streams
 * fails on purpose (error_rate). A prompt token is a whitespace-separated word.
 */
import { mulberry32, standardNormal } from "../input/generate.ts";
import type { LlmSpec, ModelSpec } from "./config_types.ts";
import { type Clock, realClock } from "./model.ts";
import { ENGINE_MODEL, type SlotEngine } from "./engine.ts";
import type { ModelRepository } from "./repository.ts";
import type { HttpRequest, HttpResponse } from "./_http.ts";
import {
  BadRequest,
  chatPromptTokens,
  completionPromptTokens,
  countWords,
} from "./_llm_prompts.ts";
import { LLM_WIRES, type LlmWire, type WireKind } from "./_llm_apis.ts";

export interface OpenAiFrontEnd {
  handle(request: HttpRequest): HttpResponse | Promise<HttpResponse>;
  /** Ends the answers in progress (their connections drop). */
  close(): void;
}

type Llm = LlmSpec;
type JsonObject = Record<string, unknown>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const DONE = encoder.encode("data: [DONE]\n\n");
/** Words that are one token each in LLaMA's and GPT-4's vocabularies, so a token is a word. */
const WORDS = ["the", "quick", "brown", "dog", "and", "a", "lazy", "cat", "ran", "again"];

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function json(status: number, value: unknown): HttpResponse {
  return {
    status,
    contentType: "application/json",
    body: encoder.encode(JSON.stringify(value)),
  };
}

/** An error in the OpenAI API's shape. */
function failure(status: number, message: string, code?: string): HttpResponse {
  return json(status, {
    error: {
      message,
      type: status === 404 ? "not_found_error" : "invalid_request_error",
      param: null,
      code: code ?? null,
    },
  });
}

function positiveInteger(body: JsonObject, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) < 1) {
    throw new BadRequest(`'${field}' must be a positive integer`);
  }
  return value as number;
}

/**
 * Output tokens: the model's natural length (output_tokens +- its deviation),
 * at least min_tokens, capped by max_tokens; exactly max_tokens with ignore_eos.
 */
function outputTokens(
  body: JsonObject,
  options: { llm: Llm; rng: () => number },
): { count: number; finish: string } {
  const { llm } = options;
  const natural = Math.max(
    1,
    Math.round(llm.outputTokens + llm.outputTokensStddev * standardNormal(options.rng)),
  );
  const max = positiveInteger(body, "max_completion_tokens") ?? positiveInteger(body, "max_tokens");
  const min = positiveInteger(body, "min_tokens") ?? 1;
  const wanted = Math.max(min, natural);
  if (max === undefined) return { count: wanted, finish: "stop" };
  if (body.ignore_eos === true || max <= wanted) return { count: max, finish: "length" };
  return { count: wanted, finish: "stop" };
}

/** Prompt tokens (words) of a request body of `kind`, a chat template's included. */
function promptTokens(body: JsonObject, kind: Kind, llm: Llm): number {
  switch (kind) {
    case "responses":
    case "messages":
    case "tgi":
    case "sglang": {
      const prompt = LLM_WIRES[kind].prompt(body);
      if (typeof prompt !== "string") throw new BadRequest(prompt.error, 422);
      // The Responses and Messages APIs apply the model's chat template, as chat does.
      return countWords(prompt) +
        (kind === "responses" || kind === "messages" ? llm.chatTemplateTokens : 0);
    }
    case "chat":
      return chatPromptTokens(body) + llm.chatTemplateTokens;
    case "completions":
      return completionPromptTokens(body);
    case "generate":
      if (typeof body.text_input !== "string") {
        throw new BadRequest("'text_input' must be a string");
      }
      return countWords(body.text_input);
    case "rankings": {
      const query = isObject(body.query) ? body.query.text : undefined;
      const passages = body.passages;
      if (
        typeof query !== "string" || !Array.isArray(passages) ||
        !passages.every((p) => isObject(p) && typeof p.text === "string")
      ) {
        throw new BadRequest(
          "A ranking request needs 'query': {'text': ...} and 'passages': [{'text': ...}, ...]",
        );
      }
      return passages.reduce((n: number, p) => n + countWords(p.text), countWords(query));
    }
    case "rerank": {
      const { query, texts } = body;
      if (
        typeof query !== "string" || !Array.isArray(texts) ||
        !texts.every((t) => typeof t === "string")
      ) {
        throw new BadRequest("A rerank request needs 'query': '...' and 'texts': ['...', ...]");
      }
      return texts.reduce((n: number, t: string) => n + countWords(t), countWords(query));
    }
    case "embeddings": {
      const input = body.input;
      const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input : undefined;
      if (texts === undefined || !texts.every((t) => typeof t === "string")) {
        throw new BadRequest("'input' must be a string or an array of strings");
      }
      return texts.reduce((n: number, t: string) => n + countWords(t), 0);
    }
  }
}

/** Ends a stream in failure: an error event, a dropped connection, or no [DONE]. */
async function failStream(
  write: (data: Uint8Array) => Promise<void>,
  kind: Llm["errorKind"],
): Promise<void> {
  if (kind === "event") {
    const error = { message: "Injected mid-stream error", type: "server_error", code: 500 };
    await write(event({ error }));
    await write(DONE);
  } else if (kind === "abort") {
    throw new Error("Injected mid-stream abort");
  }
}

/** A streamed answer: the server-sent events `stream` writes. */
function eventStream(llm: Llm, stream: HttpResponse["stream"]): HttpResponse {
  return {
    status: 200,
    contentType: "text/event-stream",
    headers: { "Cache-Control": "no-cache" },
    dropConnection: llm.closeAfterStream,
    stream,
  };
}

/** Timers of the answers in progress, all cancelled by close(). */
class Timeline {
  readonly #clock: Clock;
  readonly #pending = new Set<{ cancel: () => void; reject: (error: Error) => void }>();
  #closed = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Resolves at `ms` on the clock's timeline; rejects when the server closes. */
  until(ms: number): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("Server is shutting down"));
    const delay = ms - this.#clock.now();
    if (delay <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const entry = { cancel: () => {}, reject };
      entry.cancel = this.#clock.setTimer(() => {
        this.#pending.delete(entry);
        resolve();
      }, delay);
      this.#pending.add(entry);
    });
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#pending) {
      entry.cancel();
      entry.reject(new Error("Server is shutting down"));
    }
    this.#pending.clear();
  }
}

type Kind = "chat" | "completions" | "generate" | "embeddings" | "rankings" | "rerank" | WireKind;

interface Answer {
  kind: Kind;
  model: string;
  id: string;
  created: number;
  promptTokens: number;
  count: number;
  /** The first this many tokens are reasoning (chat). */
  reasoning: number;
  finish: string;
  /** Rankings: the passages to score. */
  passages: number;
}

/** Token i of an answer: the words join with single spaces, as a tokenizer's pieces would. */
const token = (i: number) => `${i === 0 ? "" : " "}${WORDS[i % WORDS.length]}`;

function usage(a: Answer) {
  return {
    prompt_tokens: a.promptTokens,
    completion_tokens: a.count,
    total_tokens: a.promptTokens + a.count,
  };
}

const event = (body: unknown) => encoder.encode(`data: ${JSON.stringify(body)}\n\n`);

/** One streamed event: a chunk with `choices` (and `extra` fields such as usage). */
function chunk(a: Answer, choices: JsonObject[], extra: JsonObject = {}): Uint8Array {
  const body = {
    id: a.id,
    object: a.kind === "chat" ? "chat.completion.chunk" : "text_completion",
    created: a.created,
    model: a.model,
    choices,
    ...extra,
  };
  return event(body);
}

/** A choice of a chunk: a chat delta (token `i` reasoning or content) or completion text. */
function choice(
  a: Answer,
  text: string,
  options: { finish: string | null; i?: number },
): JsonObject {
  const { finish, i = a.count } = options;
  if (a.kind !== "chat") return { index: 0, text, finish_reason: finish };
  const field = i < a.reasoning ? "reasoning_content" : "content";
  return { index: 0, delta: text === "" ? {} : { [field]: text }, finish_reason: finish };
}

/** Triton's generate answers: the model, its version and the text. */
const generated = (a: Answer, text: string) => ({
  model_name: a.model,
  model_version: "1",
  text_output: text,
});

function completeBody(a: Answer, withUsage: boolean): JsonObject | JsonObject[] {
  if (a.kind === "rankings" || a.kind === "rerank") {
    // NIM's answer: every passage's index and logit, best first; TEI's: a bare array of scores.
    const logits = Array.from({ length: a.passages }, (_, index) => ({
      index,
      logit: Math.round((1 - index / Math.max(1, a.passages)) * 8 * 1000) / 1000 - 4,
    }));
    if (a.kind === "rerank") {
      return logits.map(({ index, logit }) => ({ index, score: 1 / (1 + Math.exp(-logit)) }));
    }
    return {
      rankings: logits,
      ...(withUsage
        ? { usage: { prompt_tokens: a.promptTokens, total_tokens: a.promptTokens } }
        : {}),
    };
  }
  if (a.kind === "embeddings") {
    return {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5, 0.125, 1] }],
      model: a.model,
      ...(withUsage
        ? { usage: { prompt_tokens: a.promptTokens, total_tokens: a.promptTokens } }
        : {}),
    };
  }
  let text = "";
  let reasoning = "";
  for (let i = 0; i < a.count; i++) {
    if (i < a.reasoning) reasoning += token(i);
    else text += token(i);
  }
  if (a.kind === "generate") return generated(a, text);
  const message = {
    role: "assistant",
    content: text,
    ...(reasoning ? { reasoning_content: reasoning } : {}),
  };
  return {
    id: a.id,
    object: a.kind === "chat" ? "chat.completion" : "text_completion",
    created: a.created,
    model: a.model,
    choices: [
      a.kind === "chat"
        ? { index: 0, message, finish_reason: a.finish }
        : { index: 0, text, finish_reason: a.finish },
    ],
    ...(withUsage ? { usage: usage(a) } : {}),
  };
}

/**
 * When each token leaves: the first at `first`, token i at first + i x itl_ms
 * moved by up to +-itl_jitter_ms. Each token is moved on its own (the moves do
 * not add up), so gaps vary while every answer still ends on time.
 */
function schedule(
  first: number,
  options: { llm: Llm; count: number; rng: () => number },
): number[] {
  const { llm } = options;
  const times = [first];
  for (let i = 1; i < options.count; i++) {
    times.push(first + i * llm.itlMs + llm.itlJitterMs * (2 * options.rng() - 1));
  }
  return times;
}

/** Whether a /generate body is SGLang's (`text`) rather than TGI's (`inputs`): both serve the path. */
function sglangBody(request: HttpRequest): boolean {
  return !/"inputs"\s*:/.test(decoder.decode(request.body));
}

/** The generate path's model name and whether it streams, or undefined for another path. */
const GENERATE_PATH = /^\/v2\/models\/([^/]+)(?:\/versions\/[^/]+)?\/generate(_stream)?$/;

/** The paths besides /v1/... that the LLM front end answers: TEI's, TGI's, SGLang's, Triton's generate. */
export function isLlmPath(path: string): boolean {
  return path === "/rerank" || path === "/generate" || path === "/generate_stream" ||
    GENERATE_PATH.test(path);
}

/** The OpenAI-compatible routes over the models of `repository` that have `llm` settings. */
export function createOpenAiHandler(
  repository: ModelRepository,
  options: { clock?: Clock; engine?: SlotEngine } = {},
): OpenAiFrontEnd {
  const clock = options.clock ?? realClock;
  const timeline = new Timeline(clock);
  const tunable = options.engine;
  const llms = repository.specs.filter((s) => s.llm !== undefined);
  let answers = 0;

  const find = (name: unknown): ModelSpec => {
    if (name === undefined && llms.length > 0) return llms[0];
    const spec = llms.find((s) => s.name === name);
    if (spec === undefined) {
      throw new BadRequest(
        `The model \`${String(name)}\` does not exist (LLM models: ${
          llms.map((s) => s.name).join(", ") || "none"
        })`,
        404,
        "model_not_found",
      );
    }
    return spec;
  };

  /** Whether answer `n` (from 1) is one of the error_rate share that fails, evenly spread. */
  const fails = (llm: Llm, n: number) =>
    Math.floor(n * llm.errorRate) > Math.floor((n - 1) * llm.errorRate);

  const complete = (
    request: HttpRequest,
    options: { kind: Kind; model?: string; stream?: boolean },
  ): HttpResponse | Promise<HttpResponse> => {
    const { kind } = options;
    let body: unknown;
    try {
      body = JSON.parse(decoder.decode(request.body));
    } catch (error) {
      throw new BadRequest(`Invalid JSON body: ${(error as Error).message}`);
    }
    if (!isObject(body)) throw new BadRequest("The body must be a JSON object");
    const spec = find(options.model ?? body.model);
    const llm = spec.llm!;
    const n = ++answers;
    // Each answer its own generator: lengths and jitter do not depend on how answers interleave.
    const rng = mulberry32(n);
    const unstreamed = kind === "embeddings" || kind === "rankings" || kind === "rerank";
    const wire: LlmWire | undefined = (LLM_WIRES as Record<string, LlmWire>)[kind];
    const { count, finish } = unstreamed
      ? { count: 0, finish: "stop" }
      : outputTokens(wire ? wire.limits(body) : body, { llm, rng });
    const answer: Answer = {
      kind,
      model: spec.name,
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${n}`,
      created: Math.floor(Date.now() / 1000),
      promptTokens: promptTokens(body, kind, llm),
      count,
      reasoning: kind === "chat" ? Math.min(llm.reasoningTokens, count) : 0,
      finish,
      passages: Array.isArray(body.passages)
        ? body.passages.length
        : Array.isArray(body.texts)
        ? body.texts.length
        : 0,
    };
    const timesFrom = (first: number) => schedule(first, { llm, count: Math.max(1, count), rng });
    let times = timesFrom(request.arrival + llm.ttftMs);
    // The tunable engine's answers wait for a slot; their tokens are one decode step apart.
    const engine = spec.name === ENGINE_MODEL ? tunable : undefined;
    let release = () => {};
    const admit = async () => {
      if (!engine) return;
      release = await engine.acquire(answer.promptTokens);
      times = timesFrom(clock.now() + engine.firstTokenMs(answer.promptTokens));
    };
    const streaming = options.stream ?? body.stream === true;
    if (wire !== undefined) return wireAnswer(answer, { wire, streaming, times, llm, n });
    if (!streaming || unstreamed) {
      return admit().then(() => timeline.until(times[times.length - 1])).then(
        () => {
          if (engine) engine.generatedTokens += count;
          return json(200, completeBody(answer, llm.usage));
        },
        (error: Error) => failure(503, error.message),
      ).finally(release);
    }
    const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
    const includeUsage = llm.usage && kind !== "generate" && streamOptions.include_usage === true;
    const failAt = fails(llm, n) ? Math.min(llm.errorAfterTokens, count) : -1;
    const piece = (i: number) =>
      kind === "generate" ? event(generated(answer, token(i))) : chunk(answer, [
        choice(answer, token(i), { finish: null, i }),
      ]);
    return eventStream(llm, async (write) => {
      // Like vLLM, chat streams open with the role and empty content: not a token.
      if (kind === "chat") {
        const role = { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null };
        await write(chunk(answer, [role]));
      }
      await admit();
      try {
        for (let i = 0; i < count; i++) {
          if (i === failAt) {
            await failStream(write, llm.errorKind);
            return;
          }
          await timeline.until(times[i]);
          await write(piece(i));
          if (engine) engine.generatedTokens++;
        }
      } finally {
        release();
      }
      if (failAt === count) {
        await failStream(write, llm.errorKind);
        return;
      }
      if (kind === "generate") return;
      await write(chunk(answer, [choice(answer, "", { finish })]));
      if (includeUsage) await write(chunk(answer, [], { usage: usage(answer) }));
      await write(DONE);
    });
  };

  /** An answer of a wire's API: in one piece, or streamed as its events. */
  const wireAnswer = (
    answer: Answer,
    options: { wire: LlmWire; streaming: boolean; times: number[]; llm: Llm; n: number },
  ): HttpResponse | Promise<HttpResponse> => {
    const { wire, times, llm } = options;
    const tokens = Array.from({ length: answer.count }, (_, i) => token(i));
    const text = tokens.join("");
    if (!options.streaming) {
      return timeline.until(times[times.length - 1]).then(
        () => json(200, wire.whole(answer, text)),
        (error: Error) => failure(503, error.message),
      );
    }
    const failAt = fails(llm, options.n) ? Math.min(llm.errorAfterTokens, answer.count) : -1;
    return eventStream(llm, async (write) => {
      const send = (events: string[]) => write(encoder.encode(events.join("")));
      await send(wire.open(answer));
      let sofar = "";
      for (let i = 0; i < answer.count; i++) {
        if (i === failAt) return await failStream(write, llm.errorKind);
        await timeline.until(times[i]);
        sofar += tokens[i];
        await send([wire.token(answer, { i, text: tokens[i], sofar })]);
      }
      if (failAt === answer.count) return await failStream(write, llm.errorKind);
      await send(wire.close(answer, text));
    });
  };

  const models = json(200, {
    object: "list",
    data: llms.map((s) => ({ id: s.name, object: "model", created: 0, owned_by: "inferperf" })),
  });

  return {
    handle(request) {
      try {
        switch (request.path) {
          case "/v1/models":
            return request.method === "GET" ? models : failure(405, "Method Not Allowed");
          case "/v1/chat/completions":
          case "/v1/completions":
          case "/v1/embeddings":
          case "/v1/ranking":
          case "/rerank": {
            if (request.method !== "POST") return failure(405, "Method Not Allowed");
            const kind = request.path === "/v1/chat/completions"
              ? "chat"
              : request.path === "/v1/embeddings"
              ? "embeddings"
              : request.path === "/v1/ranking"
              ? "rankings"
              : request.path === "/rerank"
              ? "rerank"
              : "completions";
            return complete(request, { kind });
          }
          case "/v1/responses":
          case "/v1/messages":
          case "/generate":
          case "/generate_stream": {
            if (request.method !== "POST") return failure(405, "Method Not Allowed");
            const path = request.path;
            return complete(request, {
              kind: path === "/v1/responses"
                ? "responses"
                : path === "/v1/messages"
                ? "messages"
                : path === "/generate" && sglangBody(request)
                ? "sglang"
                : "tgi",
              ...(path === "/generate_stream" ? { stream: true } : {}),
            });
          }
          default: {
            const generate = GENERATE_PATH.exec(request.path);
            if (generate === null) return failure(404, `Unknown path "${request.path}"`);
            if (request.method !== "POST") return failure(405, "Method Not Allowed");
            return complete(request, {
              kind: "generate",
              model: decodeURIComponent(generate[1]),
              stream: generate[2] !== undefined,
            });
          }
        }
      } catch (error) {
        if (error instanceof BadRequest) return failure(error.status, error.message, error.code);
        throw error;
      }
    },
    close: () => timeline.close(),
  };
}
