/**
 * OpenAI-compatible front end of the reference server: /v1/models,
 * /v1/chat/completions and /v1/completions for models with `llm` settings.
 * Tokens follow a fixed schedule from the request's arrival (the first after
 * ttft_ms, then one every itl_ms), streamed as server-sent events or answered
 * at once, so that clients' time to first token and inter-token latency have
 * a ground truth. A prompt token is a whitespace-separated word.
 */
import type { ModelSpec } from "./config.ts";
import { type Clock, realClock } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import type { HttpRequest, HttpResponse } from "./_http.ts";

export interface OpenAiFrontEnd {
  handle(request: HttpRequest): HttpResponse | Promise<HttpResponse>;
  /** Ends the answers in progress (their connections drop). */
  close(): void;
}

type Llm = NonNullable<ModelSpec["llm"]>;
type JsonObject = Record<string, unknown>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const DONE = encoder.encode("data: [DONE]\n\n");
const WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "again"];

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

class BadRequest extends Error {
  constructor(message: string, readonly status = 400, readonly code?: string) {
    super(message);
  }
}

function countWords(text: string): number {
  let count = 0;
  for (const word of text.split(/\s+/)) if (word !== "") count++;
  return count;
}

/** Prompt tokens of a chat request: the words of every message's text. */
function chatPromptTokens(body: JsonObject): number {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new BadRequest("'messages' must be a non-empty array");
  }
  let count = 0;
  for (const message of body.messages) {
    const content = isObject(message) ? message.content : undefined;
    if (typeof content === "string") count += countWords(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (isObject(part) && typeof part.text === "string") count += countWords(part.text);
      }
    }
  }
  return count;
}

function completionPromptTokens(body: JsonObject): number {
  const prompt = body.prompt;
  if (typeof prompt === "string") return countWords(prompt);
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === "string")) {
    return prompt.reduce((n: number, p: string) => n + countWords(p), 0);
  }
  throw new BadRequest("'prompt' must be a string or an array of strings");
}

/** Output tokens: the model's natural length, capped by max_tokens; exactly max_tokens with ignore_eos. */
function outputTokens(body: JsonObject, llm: Llm): { count: number; finish: string } {
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (max === undefined || max === null) return { count: llm.outputTokens, finish: "stop" };
  if (!Number.isInteger(max) || (max as number) < 1) {
    throw new BadRequest("'max_tokens' must be a positive integer");
  }
  const limit = max as number;
  if (body.ignore_eos === true || limit <= llm.outputTokens) {
    return { count: limit, finish: "length" };
  }
  return { count: llm.outputTokens, finish: "stop" };
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

interface Answer {
  chat: boolean;
  model: string;
  id: string;
  created: number;
  promptTokens: number;
  count: number;
  finish: string;
}

const token = (i: number) => `${WORDS[i % WORDS.length]} `;

function usage(a: Answer) {
  return {
    prompt_tokens: a.promptTokens,
    completion_tokens: a.count,
    total_tokens: a.promptTokens + a.count,
  };
}

/** One streamed event: a chunk with `choices` (and `extra` fields such as usage). */
function chunk(a: Answer, choices: JsonObject[], extra: JsonObject = {}): Uint8Array {
  const body = {
    id: a.id,
    object: a.chat ? "chat.completion.chunk" : "text_completion",
    created: a.created,
    model: a.model,
    choices,
    ...extra,
  };
  return encoder.encode(`data: ${JSON.stringify(body)}\n\n`);
}

/** A choice of a chunk: a chat delta or completion text. */
function choice(a: Answer, text: string, finish: string | null): JsonObject {
  return a.chat
    ? { index: 0, delta: text === "" ? {} : { content: text }, finish_reason: finish }
    : { index: 0, text, finish_reason: finish };
}

function completeBody(a: Answer): JsonObject {
  let text = "";
  for (let i = 0; i < a.count; i++) text += token(i);
  return {
    id: a.id,
    object: a.chat ? "chat.completion" : "text_completion",
    created: a.created,
    model: a.model,
    choices: [
      a.chat
        ? { index: 0, message: { role: "assistant", content: text }, finish_reason: a.finish }
        : { index: 0, text, finish_reason: a.finish },
    ],
    usage: usage(a),
  };
}

/** The OpenAI-compatible routes over the models of `repository` that have `llm` settings. */
export function createOpenAiHandler(
  repository: ModelRepository,
  options: { clock?: Clock } = {},
): OpenAiFrontEnd {
  const timeline = new Timeline(options.clock ?? realClock);
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

  const complete = (request: HttpRequest, chat: boolean): HttpResponse | Promise<HttpResponse> => {
    let body: unknown;
    try {
      body = JSON.parse(decoder.decode(request.body));
    } catch (error) {
      throw new BadRequest(`Invalid JSON body: ${(error as Error).message}`);
    }
    if (!isObject(body)) throw new BadRequest("The body must be a JSON object");
    const spec = find(body.model);
    const llm = spec.llm!;
    const { count, finish } = outputTokens(body, llm);
    const answer: Answer = {
      chat,
      model: spec.name,
      id: `${chat ? "chatcmpl" : "cmpl"}-${++answers}`,
      created: Math.floor(Date.now() / 1000),
      promptTokens: chat ? chatPromptTokens(body) : completionPromptTokens(body),
      count,
      finish,
    };
    const first = request.arrival + llm.ttftMs;
    if (body.stream !== true) {
      return timeline.until(first + (count - 1) * llm.itlMs).then(
        () => json(200, completeBody(answer)),
        (error: Error) => failure(503, error.message),
      );
    }
    const options = isObject(body.stream_options) ? body.stream_options : {};
    const includeUsage = options.include_usage === true;
    return {
      status: 200,
      contentType: "text/event-stream",
      headers: { "Cache-Control": "no-cache" },
      dropConnection: llm.closeAfterStream,
      stream: async (write) => {
        // Like vLLM, chat streams open with the role and empty content: not a token.
        if (chat) {
          const role = { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null };
          await write(chunk(answer, [role]));
        }
        for (let i = 0; i < count; i++) {
          await timeline.until(first + i * llm.itlMs);
          await write(chunk(answer, [choice(answer, token(i), null)]));
        }
        await write(chunk(answer, [choice(answer, "", finish)]));
        if (includeUsage) await write(chunk(answer, [], { usage: usage(answer) }));
        await write(DONE);
      },
    };
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
            if (request.method !== "POST") return failure(405, "Method Not Allowed");
            return complete(request, request.path === "/v1/chat/completions");
          default:
            return failure(404, `Unknown path "${request.path}"`);
        }
      } catch (error) {
        if (error instanceof BadRequest) return failure(error.status, error.message, error.code);
        throw error;
      }
    },
    close: () => timeline.close(),
  };
}
