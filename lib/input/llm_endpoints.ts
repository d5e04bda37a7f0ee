/**
 * The LLM APIs inferperf speaks (--endpoint-type, else found from --endpoint):
 * for each, its default path, how a synthetic turn becomes its request body,
 * where its sampling parameters go (--extra-inputs) and which answer format
 * lib/protocol reads its answers with. OpenAI's chat, completions,
 * embeddings, rankings (NIM) and Responses API, Hugging Face TEI's rerank,
 * Anthropic's Messages API, Triton's generate extension, TGI's and SGLang's
 * native generate, and the template endpoint for any JSON API.
 */
import { InputError } from "./errors.ts";

/** How lib/protocol reads an API's answers and stream events (its _llm_answers.ts). */
export type AnswerFormat = "openai" | "responses" | "messages" | "tgi" | "sglang" | "template";

/** What a user turn's body is made of. */
export interface TurnBody {
  model: string;
  texts: readonly string[];
  /** The answer's length asked for; absent leaves it to the server. */
  maxTokens?: number;
  /** --output-tokens-mean-deterministic: the API's way of making the length exact, where it has one. */
  exact: boolean;
  streaming: boolean;
  /** The chat message's role; default "user". */
  role?: string;
  /** Chat content parts after the text: images and audio. */
  media?: readonly Record<string, unknown>[];
  /** Rankings: the passages to rank against the turn's text (the query). */
  passages?: readonly string[];
}

export interface EndpointDef {
  /** --endpoint when not given; "" when it must be (template). */
  path: string;
  /** The path of a streamed request, where the API streams by path (TGI's generate_stream). */
  streamPath?: string;
  answer: AnswerFormat;
  /** Answers carry no generated tokens (embeddings, rankings): never streamed. */
  noTokens?: boolean;
  /** The body of a turn, before --extra-inputs. */
  body(turn: TurnBody): Record<string, unknown>;
  /** The object --extra-inputs go in; default the body itself. */
  samplingOf?(body: Record<string, unknown>): Record<string, unknown>;
}

/** A turn's prompt: its texts joined by spaces. */
const promptOf = (turn: TurnBody) => turn.texts.join(" ");

/** OpenAI's output length and stream fields (vLLM's and TensorRT-LLM's min_tokens, ignore_eos). */
function openAiFields(
  body: Record<string, unknown>,
  turn: TurnBody,
  options: { maxField: string; usageOption: boolean },
): Record<string, unknown> {
  if (turn.maxTokens !== undefined) {
    body[options.maxField] = turn.maxTokens;
    if (turn.exact) {
      body.min_tokens = turn.maxTokens;
      body.ignore_eos = true;
    }
  }
  if (turn.streaming) {
    body.stream = true;
    if (options.usageOption) body.stream_options = { include_usage: true };
  }
  return body;
}

const OPENAI = { maxField: "max_tokens", usageOption: true };

function chatBody(turn: TurnBody): Record<string, unknown> {
  // Several texts in one chat turn are its content parts, as AIPerf sends them.
  const media = turn.media ?? [];
  const content = turn.texts.length === 1 && media.length === 0
    ? promptOf(turn)
    : [...turn.texts.map((text) => ({ type: "text", text })), ...media];
  return openAiFields(
    { model: turn.model, messages: [{ role: turn.role ?? "user", content }] },
    turn,
    OPENAI,
  );
}

/** Where a field goes, creating the object on first use. */
function objectIn(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = body[field];
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  const created: Record<string, unknown> = {};
  body[field] = created;
  return created;
}

/** The endpoint types by their --endpoint-type name (AIPerf's names where it has the API). */
export const ENDPOINT_TYPES = {
  chat: { path: "v1/chat/completions", answer: "openai", body: chatBody },
  completions: {
    path: "v1/completions",
    answer: "openai",
    body: (turn) => openAiFields({ model: turn.model, prompt: promptOf(turn) }, turn, OPENAI),
  },
  embeddings: {
    path: "v1/embeddings",
    answer: "openai",
    noTokens: true,
    body: (turn) => ({ model: turn.model, input: [...turn.texts] }),
  },
  // NIM's and AIPerf's rankings request: one query, passages to rank; no output length.
  rankings: {
    path: "v1/ranking",
    answer: "openai",
    noTokens: true,
    body: (turn) => ({
      model: turn.model,
      query: { text: promptOf(turn) },
      passages: (turn.passages ?? []).map((text) => ({ text })),
    }),
  },
  // Hugging Face TEI's rerank (genai-perf's --extra-inputs rankings:tei): no model field.
  rerank: {
    path: "rerank",
    answer: "openai",
    noTokens: true,
    body: (turn) => ({ query: promptOf(turn), texts: [...turn.passages ?? []] }),
  },
  // Triton's generate extension streams by path; the stream option is OpenAI's.
  triton_generate: {
    path: "v2/models/MODEL/generate",
    streamPath: "v2/models/MODEL/generate_stream",
    answer: "openai",
    body: (turn) =>
      openAiFields({ text_input: promptOf(turn) }, { ...turn, streaming: false }, OPENAI),
  },
  // OpenAI's Responses API: usage comes with response.completed, no stream option needed.
  responses: {
    path: "v1/responses",
    answer: "responses",
    body: (turn) =>
      openAiFields({ model: turn.model, input: promptOf(turn) }, turn, {
        maxField: "max_output_tokens",
        usageOption: false,
      }),
  },
  // Anthropic's Messages API: max_tokens is required; it has no way to make a length exact.
  messages: {
    path: "v1/messages",
    answer: "messages",
    body: (turn) => {
      if (turn.maxTokens === undefined) {
        throw new InputError(
          "The Messages API (--endpoint-type messages) requires max_tokens in every request: " +
            "give --output-tokens-mean N or --extra-inputs max_tokens:N",
        );
      }
      return {
        model: turn.model,
        max_tokens: turn.maxTokens,
        messages: [{ role: turn.role ?? "user", content: promptOf(turn) }],
        ...(turn.streaming ? { stream: true } : {}),
      };
    },
  },
  // TGI's native API: parameters hold the sampling; details brings generated_tokens.
  huggingface_generate: {
    path: "generate",
    streamPath: "generate_stream",
    answer: "tgi",
    body: (turn) => ({
      inputs: promptOf(turn),
      parameters: {
        ...(turn.maxTokens === undefined ? {} : { max_new_tokens: turn.maxTokens }),
        details: true,
      },
    }),
    samplingOf: (body) => objectIn(body, "parameters"),
  },
  // SGLang's native /generate: sampling_params, meta_info's token counts in every event.
  sglang_generate: {
    path: "generate",
    answer: "sglang",
    body: (turn) => {
      const sampling: Record<string, unknown> = {};
      if (turn.maxTokens !== undefined) {
        sampling.max_new_tokens = turn.maxTokens;
        if (turn.exact) {
          sampling.min_new_tokens = turn.maxTokens;
          sampling.ignore_eos = true;
        }
      }
      return {
        text: promptOf(turn),
        sampling_params: sampling,
        ...(turn.streaming ? { stream: true } : {}),
      };
    },
    samplingOf: (body) => objectIn(body, "sampling_params"),
  },
  // Rendered from --extra-inputs payload_template (llm_template.ts); the body here is a stand-in.
  template: { path: "", answer: "template", body: () => ({}) },
} satisfies Record<string, EndpointDef>;

export type EndpointType = keyof typeof ENDPOINT_TYPES;

export const ENDPOINT_TYPE_NAMES = Object.keys(ENDPOINT_TYPES) as EndpointType[];

export function endpointDef(type: EndpointType): EndpointDef {
  return ENDPOINT_TYPES[type];
}

const TRITON_GENERATE = /^v2\/models\/[^/]+(\/versions\/[^/]+)?\/generate(_stream)?$/;

/**
 * The endpoint type of an --endpoint path given alone: the API whose default
 * path it is (generate and generate_stream are TGI's; SGLang's /generate
 * needs --endpoint-type sglang_generate), Triton's generate for any model.
 */
export function endpointTypeOf(path: string): EndpointType | undefined {
  if (path === "") return undefined;
  if (TRITON_GENERATE.test(path)) return "triton_generate";
  for (const name of ENDPOINT_TYPE_NAMES) {
    const def: EndpointDef = ENDPOINT_TYPES[name];
    if (def.path === path || def.streamPath === path) return name;
  }
  return undefined;
}

/** The path of a request: the streaming twin of an API's default path where it streams by path. */
export function pathFor(
  type: EndpointType,
  options: { path: string; streaming: boolean },
): string {
  const def: EndpointDef = ENDPOINT_TYPES[type];
  return def.streamPath !== undefined && options.streaming && options.path === def.path
    ? def.streamPath
    : options.path;
}
