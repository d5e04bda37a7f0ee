/**
 * The reference server's LLM APIs beyond OpenAI's chat and completions: the
 * Responses API (/v1/responses), Anthropic's Messages API (/v1/messages),
 * TGI's /generate and /generate_stream and SGLang's /generate, each with its
 * request fields, its answer and its stream events as the APIs' published
 * references show them, so that clients' parsing has a ground truth.
 */
export type JsonObject = Record<string, unknown>;

/** What an answer of the reference server is: its ids, token counts and finish. */
export interface WireAnswer {
  model: string;
  id: string;
  created: number;
  promptTokens: number;
  count: number;
  finish: string;
}

export interface LlmWire {
  /** The prompt's text, or a message saying what the request lacks. */
  prompt(body: JsonObject): string | { error: string };
  /** The output length fields as OpenAI's (max_tokens, min_tokens, ignore_eos). */
  limits(body: JsonObject): JsonObject;
  /** The answer in one piece. */
  whole(a: WireAnswer, text: string): JsonObject;
  /** Events before the first token. */
  open(a: WireAnswer): string[];
  /** The event of token `i`: its text, and the answer's text up to it. */
  token(a: WireAnswer, token: { i: number; text: string; sofar: string }): string;
  /** Events after the last token (the whole text given). */
  close(a: WireAnswer, text: string): string[];
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const data = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
/** An event with its type line, as the Responses and Messages APIs send them. */
const typed = (body: JsonObject) => `event: ${body.type}\ndata: ${JSON.stringify(body)}\n\n`;
const DONE = "data: [DONE]\n\n";

/** The text of a message's content: a string, or its text parts. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content.filter((p) => isObject(p) && typeof p.text === "string").map((p) => p.text)
    .join(" ");
}

function messagesText(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const texts = messages.map((m) => isObject(m) ? contentText(m.content) : undefined);
  return texts.every((t) => t !== undefined) ? texts.join(" ") : undefined;
}

function responsesUsage(a: WireAnswer): JsonObject {
  return {
    input_tokens: a.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: a.count,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: a.promptTokens + a.count,
  };
}

/** A Responses API response object, in progress (no output yet) or completed. */
function responseObject(a: WireAnswer, text: string | undefined): JsonObject {
  const done = text !== undefined;
  return {
    id: `resp_${a.id}`,
    object: "response",
    created_at: a.created,
    status: done ? (a.finish === "length" ? "incomplete" : "completed") : "in_progress",
    model: a.model,
    output: done ? [messageItem(a, text, "completed")] : [],
    usage: done ? responsesUsage(a) : null,
    ...(done && a.finish === "length"
      ? { incomplete_details: { reason: "max_output_tokens" } }
      : {}),
  };
}

function messageItem(a: WireAnswer, text: string, status: string): JsonObject {
  return {
    id: `msg_${a.id}`,
    type: "message",
    status,
    role: "assistant",
    content: status === "in_progress" ? [] : [{ type: "output_text", text, annotations: [] }],
  };
}

/** OpenAI's Responses API: input (a string or messages), max_output_tokens; typed events. */
const responses: LlmWire = {
  prompt: (body) =>
    typeof body.input === "string"
      ? body.input
      : messagesText(body.input) ?? { error: "'input' must be a string or a list of messages" },
  limits: (body) => ({ ...body, max_tokens: body.max_output_tokens }),
  whole: (a, text) => responseObject(a, text),
  open: (a) => {
    let n = 0;
    return [
      typed({
        type: "response.created",
        sequence_number: n++,
        response: responseObject(a, undefined),
      }),
      typed({
        type: "response.in_progress",
        sequence_number: n++,
        response: responseObject(a, undefined),
      }),
      typed({
        type: "response.output_item.added",
        sequence_number: n++,
        output_index: 0,
        item: messageItem(a, "", "in_progress"),
      }),
      typed({
        type: "response.content_part.added",
        sequence_number: n++,
        item_id: `msg_${a.id}`,
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    ];
  },
  token: (a, { i, text }) =>
    typed({
      type: "response.output_text.delta",
      sequence_number: 4 + i,
      item_id: `msg_${a.id}`,
      output_index: 0,
      content_index: 0,
      delta: text,
    }),
  close: (a, text) => {
    let n = 4 + a.count;
    const ids = { item_id: `msg_${a.id}`, output_index: 0, content_index: 0 };
    const final = responseObject(a, text);
    return [
      typed({ type: "response.output_text.done", sequence_number: n++, ...ids, text }),
      typed({
        type: "response.content_part.done",
        sequence_number: n++,
        ...ids,
        part: { type: "output_text", text, annotations: [] },
      }),
      typed({
        type: "response.output_item.done",
        sequence_number: n++,
        output_index: 0,
        item: messageItem(a, text, "completed"),
      }),
      typed({
        type: final.status === "incomplete" ? "response.incomplete" : "response.completed",
        sequence_number: n++,
        response: final,
      }),
    ];
  },
};

const stopReason = (a: WireAnswer) => a.finish === "length" ? "max_tokens" : "end_turn";

/** Anthropic's Messages API: messages and a required max_tokens; message_start ... message_stop. */
const messages: LlmWire = {
  prompt: (body) => {
    if (typeof body.max_tokens !== "number") return { error: "max_tokens: Field required" };
    const system = typeof body.system === "string" ? `${body.system} ` : "";
    const text = messagesText(body.messages);
    return text === undefined ? { error: "messages: Field required" } : system + text;
  },
  limits: (body) => body,
  whole: (a, text) => ({
    id: `msg_${a.id}`,
    type: "message",
    role: "assistant",
    model: a.model,
    content: [{ type: "text", text }],
    stop_reason: stopReason(a),
    stop_sequence: null,
    usage: { input_tokens: a.promptTokens, output_tokens: a.count },
  }),
  open: (a) => [
    typed({
      type: "message_start",
      message: {
        id: `msg_${a.id}`,
        type: "message",
        role: "assistant",
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: a.promptTokens, output_tokens: 1 },
      },
    }),
    typed({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    typed({ type: "ping" }),
  ],
  token: (_a, { text }) =>
    typed({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
  close: (a) => [
    typed({ type: "content_block_stop", index: 0 }),
    typed({
      type: "message_delta",
      delta: { stop_reason: stopReason(a), stop_sequence: null },
      usage: { output_tokens: a.count },
    }),
    typed({ type: "message_stop" }),
  ],
};

const tgiFinish = (a: WireAnswer) => a.finish === "length" ? "length" : "eos_token";

/** TGI's native API: inputs, parameters.max_new_tokens; a token per event, details at the end. */
const tgi: LlmWire = {
  prompt: (body) =>
    typeof body.inputs === "string" ? body.inputs : { error: "missing field `inputs`" },
  limits: (body) => {
    const p = isObject(body.parameters) ? body.parameters : {};
    return { max_tokens: p.max_new_tokens };
  },
  whole: (a, text) => ({
    generated_text: text,
    details: { finish_reason: tgiFinish(a), generated_tokens: a.count, seed: null },
  }),
  open: () => [],
  token: (a, { i, text, sofar }) => {
    const last = i + 1 === a.count;
    return data({
      index: i + 1,
      token: { id: 100 + (i % 10), text, logprob: -0.25, special: false },
      generated_text: last ? sofar : null,
      details: last ? { finish_reason: tgiFinish(a), generated_tokens: a.count, seed: null } : null,
    });
  },
  close: () => [],
};

/** SGLang's native /generate: text, sampling_params; each event repeats the text so far. */
const sglang: LlmWire = {
  prompt: (body) =>
    typeof body.text === "string" ? body.text : { error: "'text' must be a string" },
  limits: (body) => {
    const p = isObject(body.sampling_params) ? body.sampling_params : {};
    return { max_tokens: p.max_new_tokens, min_tokens: p.min_new_tokens, ignore_eos: p.ignore_eos };
  },
  whole: (a, text) => ({ text, meta_info: sglangMeta(a, a.count, true) }),
  open: () => [],
  token: (a, { i, sofar }) =>
    data({ text: sofar, meta_info: sglangMeta(a, i + 1, i + 1 === a.count) }),
  close: () => [DONE],
};

function sglangMeta(a: WireAnswer, completion: number, done: boolean): JsonObject {
  return {
    id: a.id,
    finish_reason: done ? { type: a.finish === "length" ? "length" : "stop" } : null,
    prompt_tokens: a.promptTokens,
    completion_tokens: completion,
    cached_tokens: 0,
  };
}

export const LLM_WIRES = { responses, messages, tgi, sglang } as const;
export type WireKind = keyof typeof LLM_WIRES;
