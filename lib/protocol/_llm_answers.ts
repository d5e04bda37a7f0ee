/**
 * How each LLM API's answers and stream events read (the answer formats of
 * lib/input/llm_endpoints.ts): the output an event carries, its reasoning
 * part, the server's token counts (written into the request's TokenTiming)
 * and whether it is the stream's last event. One function per format, called
 * once per parsed event; the session parses the JSON and handles `[DONE]` and
 * `error` fields for all.
 */
import type { AnswerFormat } from "../input/llm_endpoints.ts";
import { compilePath, type JsonPath } from "../input/llm_template.ts";
import type { TokenTiming } from "../types/timing.ts";
import type { TemplateFields } from "./plan.ts";
import { isObject, type JsonObject } from "./_http_session.ts";

/** What one event carried; refilled for every event. */
export interface Reading {
  /** Output text ("" for an output without text, such as TGI's special tokens). */
  text: string;
  /** The reasoning part of `text`. */
  reasoning: string;
  /** The event carried output (a token or more, or embeddings' vectors). */
  output: boolean;
  /** The event ends the stream. */
  end: boolean;
  /** An error the event reports. */
  error?: string;
  /** The answer's text so far, for APIs whose events repeat it (SGLang's). Reset per request. */
  sofar: string;
}

export type AnswerReader = (body: JsonObject, out: Reading, t: TokenTiming) => void;

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";
const count = (value: unknown): value is number => typeof value === "number" && value >= 0;

/** Server-side counts: prompt (or -1), output, reasoning (or -1). */
function usage(t: TokenTiming, prompt: number, output: number, reasoning = -1): void {
  t.usage = true;
  t.outputTokens = output;
  t.serverInputTokens = prompt;
  if (reasoning >= 0) t.reasoningUsage = reasoning;
}

/** OpenAI's cached prompt tokens (prompt_tokens_details, input_tokens_details). */
function cached(t: TokenTiming, details: unknown): void {
  if (isObject(details) && count(details.cached_tokens)) t.cachedTokens = details.cached_tokens;
}

function addText(out: Reading, text: unknown, reasoning: boolean): void {
  if (!nonEmpty(text)) return;
  out.text += text;
  if (reasoning) out.reasoning += text;
  out.output = true;
}

/**
 * OpenAI's chat and completions (a delta's or message's `content` and
 * `reasoning_content`, a choice's `text`), Triton generate's `text_output`;
 * embeddings' vectors and rankings' scores are an output without text.
 */
function readOpenAi(body: JsonObject, out: Reading, t: TokenTiming): void {
  if (nonEmpty(body.text_output)) addText(out, body.text_output, false);
  const choices = body.choices;
  if (Array.isArray(choices)) {
    for (const choice of choices) {
      if (!isObject(choice)) continue;
      addText(out, choice.text, false);
      const part = isObject(choice.delta) ? choice.delta : choice.message;
      if (!isObject(part)) continue;
      addText(out, part.content, false);
      addText(out, part.reasoning_content, true);
    }
  } else if (out.text === "") {
    const list = Array.isArray(body.data) ? body.data : body.rankings;
    if (Array.isArray(list) && list.length > 0) {
      out.text = " ";
      out.output = true;
    }
  }
  const u = body.usage;
  if (isObject(u) && count(u.prompt_tokens)) {
    // Embeddings answers count only prompt tokens.
    const details = u.completion_tokens_details;
    const reasoning = isObject(details) && count(details.reasoning_tokens)
      ? details.reasoning_tokens
      : -1;
    usage(t, u.prompt_tokens, count(u.completion_tokens) ? u.completion_tokens : 0, reasoning);
    cached(t, u.prompt_tokens_details);
  }
}

/** The Responses API's usage: input and output tokens, reasoning in output_tokens_details. */
function responsesUsage(u: unknown, t: TokenTiming): void {
  if (!isObject(u) || !count(u.input_tokens) || !count(u.output_tokens)) return;
  const details = u.output_tokens_details;
  const reasoning = isObject(details) && count(details.reasoning_tokens)
    ? details.reasoning_tokens
    : -1;
  usage(t, u.input_tokens, u.output_tokens, reasoning);
  cached(t, u.input_tokens_details);
}

/**
 * OpenAI's Responses API: typed events (response.output_text.delta, the
 * reasoning deltas, response.completed with the usage) or, not streamed, a
 * response object whose output items hold the text.
 */
function readResponses(body: JsonObject, out: Reading, t: TokenTiming): void {
  switch (body.type) {
    case "response.output_text.delta":
      addText(out, body.delta, false);
      return;
    case "response.reasoning_text.delta":
    case "response.reasoning_summary_text.delta":
      addText(out, body.delta, true);
      return;
    case "response.completed":
    case "response.incomplete":
      responsesUsage(isObject(body.response) ? body.response.usage : undefined, t);
      out.end = true;
      return;
    case "response.failed": {
      const response = isObject(body.response) ? body.response : {};
      const error = isObject(response.error) ? response.error : {};
      out.error = typeof error.message === "string" ? error.message : "response.failed";
      out.end = true;
      return;
    }
    case "error":
      out.error = typeof body.message === "string" ? body.message : JSON.stringify(body);
      return;
  }
  if (body.object !== "response" || !Array.isArray(body.output)) return;
  for (const item of body.output) {
    if (!isObject(item)) continue;
    const reasoning = item.type === "reasoning";
    for (const part of [item.content, item.summary]) {
      if (!Array.isArray(part)) continue;
      for (const piece of part) if (isObject(piece)) addText(out, piece.text, reasoning);
    }
  }
  responsesUsage(body.usage, t);
}

/** Anthropic's usage: input tokens exclude the cached ones, which are added back. */
function messagesUsage(u: unknown, t: TokenTiming): void {
  if (!isObject(u) || !count(u.output_tokens)) return;
  let prompt = count(u.input_tokens) ? u.input_tokens : t.serverInputTokens ?? -1;
  if (count(u.input_tokens)) {
    if (count(u.cache_read_input_tokens)) {
      prompt += u.cache_read_input_tokens;
      t.cachedTokens = u.cache_read_input_tokens;
    }
    if (count(u.cache_creation_input_tokens)) prompt += u.cache_creation_input_tokens;
  }
  usage(t, prompt, u.output_tokens);
}

/**
 * Anthropic's Messages API: message_start (the prompt's usage),
 * content_block_delta (text_delta, thinking_delta), message_delta (the
 * output's usage), message_stop; not streamed, a message with content blocks.
 */
function readMessages(body: JsonObject, out: Reading, t: TokenTiming): void {
  switch (body.type) {
    case "content_block_delta": {
      const delta = isObject(body.delta) ? body.delta : {};
      if (delta.type === "text_delta") addText(out, delta.text, false);
      else if (delta.type === "thinking_delta") addText(out, delta.thinking, true);
      return;
    }
    case "message_start":
      if (isObject(body.message)) messagesUsage(body.message.usage, t);
      return;
    case "message_delta":
      messagesUsage(body.usage, t);
      return;
    case "message_stop":
      out.end = true;
      return;
    case "message":
      if (Array.isArray(body.content)) {
        for (const block of body.content) {
          if (!isObject(block)) continue;
          if (block.type === "text") addText(out, block.text, false);
          else if (block.type === "thinking") addText(out, block.thinking, true);
        }
      }
      messagesUsage(body.usage, t);
  }
}

/**
 * TGI's native API: a stream event per token (a special token is output
 * without text), the last one with generated_text and details
 * (generated_tokens); not streamed, generated_text and details.
 */
function readTgi(body: JsonObject, out: Reading, t: TokenTiming): void {
  const token = body.token;
  if (isObject(token)) {
    out.output = true;
    if (token.special !== true && nonEmpty(token.text)) out.text = token.text;
  } else addText(out, body.generated_text, false);
  const details = body.details;
  if (isObject(details) && count(details.generated_tokens)) {
    usage(t, t.serverInputTokens ?? -1, details.generated_tokens);
  }
  if (isObject(token) && typeof body.generated_text === "string") out.end = true;
}

/**
 * SGLang's native /generate: each event repeats the text so far (unless the
 * server streams increments, --incremental-streaming-output), meta_info
 * counts the prompt and completion tokens.
 */
function readSglang(body: JsonObject, out: Reading, t: TokenTiming): void {
  const text = body.text;
  if (typeof text === "string") {
    const sofar = out.sofar;
    const delta = text.startsWith(sofar) ? text.slice(sofar.length) : text;
    out.sofar = delta === text ? sofar + text : text;
    addText(out, delta, false);
  }
  const meta = body.meta_info;
  if (isObject(meta) && count(meta.completion_tokens)) {
    usage(t, count(meta.prompt_tokens) ? meta.prompt_tokens : -1, meta.completion_tokens);
  }
}

/** Where a template answer's text is looked for without response_field (AIPerf's order). */
const AUTO_TEXT = [
  "text",
  "content",
  "response",
  "output",
  "result",
  "choices[0].text",
  "choices[0].delta.content",
  "choices[0].message.content",
];

function lookup(body: unknown, path: JsonPath): unknown {
  let value = body;
  for (const step of path) {
    if (typeof step === "number") {
      if (!Array.isArray(value)) return undefined;
    } else if (!isObject(value)) return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

function templateReader(fields: TemplateFields): AnswerReader {
  const texts = (fields.text === undefined ? AUTO_TEXT : [fields.text]).map(compilePath);
  const tokens = fields.tokens === undefined ? undefined : compilePath(fields.tokens);
  const prompt = fields.promptTokens === undefined ? undefined : compilePath(fields.promptTokens);
  return (body, out, t) => {
    for (const path of texts) {
      const text = lookup(body, path);
      if (typeof text === "string") {
        addText(out, text, false);
        break;
      }
    }
    const n = tokens === undefined ? undefined : lookup(body, tokens);
    const p = prompt === undefined ? undefined : lookup(body, prompt);
    if (count(p)) t.serverInputTokens = p;
    if (count(n)) usage(t, t.serverInputTokens ?? -1, n);
  };
}

const READERS: Record<Exclude<AnswerFormat, "template">, AnswerReader> = {
  openai: readOpenAi,
  responses: readResponses,
  messages: readMessages,
  tgi: readTgi,
  sglang: readSglang,
};

/** The reader of an answer format (the template's with its fields). */
export function answerReader(format: AnswerFormat, template: TemplateFields = {}): AnswerReader {
  return format === "template" ? templateReader(template) : READERS[format];
}
