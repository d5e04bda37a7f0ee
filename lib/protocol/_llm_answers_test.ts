/**
 * Each API's answer reader over event sequences in the shapes of its
 * published reference (OpenAI's Responses streaming events, Anthropic's
 * Messages streaming example, TGI's generate_stream, SGLang's /generate,
 * llama.cpp's /completion through the template reader).
 */
import assert from "node:assert/strict";
import type { AnswerFormat } from "../input/llm_endpoints.ts";
import type { TokenTiming } from "../types/timing.ts";
import { answerReader, type Reading } from "./_llm_answers.ts";
import type { TemplateFields } from "./plan.ts";

interface Outcome {
  texts: string[];
  reasoning: string;
  ended: boolean;
  errors: string[];
  t: TokenTiming;
}

function read(
  format: AnswerFormat,
  events: unknown[],
  template?: TemplateFields,
): Outcome {
  const reader = answerReader(format, template);
  const t = { usage: false, outputTokens: 0, serverInputTokens: -1 } as TokenTiming;
  const out: Reading = { text: "", reasoning: "", output: false, end: false, sofar: "" };
  const outcome: Outcome = { texts: [], reasoning: "", ended: false, errors: [], t };
  for (const event of events) {
    Object.assign(out, { text: "", reasoning: "", output: false, end: false, error: undefined });
    reader(event as Record<string, unknown>, out, t);
    if (out.output) outcome.texts.push(out.text);
    outcome.reasoning += out.reasoning;
    if (out.end) outcome.ended = true;
    if (out.error !== undefined) outcome.errors.push(out.error);
  }
  return outcome;
}

Deno.test("Responses API: output_text deltas are the tokens, response.completed the usage and end", () => {
  const item = { item_id: "msg_1", output_index: 0, content_index: 0 };
  const o = read("responses", [
    {
      type: "response.created",
      sequence_number: 0,
      response: { id: "resp_1", status: "in_progress" },
    },
    { type: "response.in_progress", sequence_number: 1, response: { id: "resp_1" } },
    { type: "response.output_item.added", output_index: 0, item: { type: "message", content: [] } },
    { type: "response.content_part.added", ...item, part: { type: "output_text", text: "" } },
    { type: "response.reasoning_summary_text.delta", ...item, delta: "thinking" },
    { type: "response.output_text.delta", ...item, delta: "Hi" },
    { type: "response.output_text.delta", ...item, delta: " there" },
    { type: "response.output_text.done", ...item, text: "Hi there" },
    { type: "response.output_item.done", output_index: 0, item: { type: "message" } },
    {
      type: "response.completed",
      response: {
        id: "resp_1",
        status: "completed",
        usage: {
          input_tokens: 36,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 87,
          output_tokens_details: { reasoning_tokens: 12 },
          total_tokens: 123,
        },
      },
    },
  ]);
  assert.deepEqual(o.texts, ["thinking", "Hi", " there"]);
  assert.equal(o.reasoning, "thinking");
  assert.ok(o.ended);
  assert.deepEqual([o.t.usage, o.t.serverInputTokens, o.t.outputTokens, o.t.reasoningUsage], [
    true,
    36,
    87,
    12,
  ]);
  const whole = read("responses", [{
    id: "resp_2",
    object: "response",
    status: "completed",
    output: [{
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "In a peaceful grove", annotations: [] }],
    }],
    usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14 },
  }]);
  assert.deepEqual(whole.texts, ["In a peaceful grove"]);
  assert.equal(whole.t.outputTokens, 4);
  const failed = read("responses", [{
    type: "response.failed",
    response: { status: "failed", error: { code: "server_error", message: "The model failed" } },
  }]);
  assert.deepEqual(failed.errors, ["The model failed"]);
});

Deno.test("Messages API: text deltas, the prompt's usage in message_start, the output's in message_delta", () => {
  const o = read("messages", [
    {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [],
        usage: { input_tokens: 25, cache_read_input_tokens: 5, output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "ping" },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hm" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "!" } },
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 15 },
    },
    { type: "message_stop" },
  ]);
  assert.deepEqual(o.texts, ["Hm", "Hello", "!"]);
  assert.equal(o.reasoning, "Hm");
  assert.ok(o.ended);
  // Cached prompt tokens are part of the prompt: input_tokens leaves them out.
  assert.deepEqual([o.t.serverInputTokens, o.t.outputTokens], [30, 15]);
  const whole = read("messages", [{
    type: "message",
    content: [{ type: "text", text: "Hi, I'm Claude." }],
    usage: { input_tokens: 2095, output_tokens: 503 },
  }]);
  assert.deepEqual(whole.texts, ["Hi, I'm Claude."]);
  assert.deepEqual([whole.t.serverInputTokens, whole.t.outputTokens], [2095, 503]);
});

Deno.test("TGI: a token per event (a special token is output without text), details at the end", () => {
  const token = (id: number, text: string, special = false) => ({
    id,
    text,
    logprob: -0.3,
    special,
  });
  const o = read("tgi", [
    { index: 1, token: token(3, " deep"), generated_text: null, details: null },
    { index: 2, token: token(4, " learning"), generated_text: null, details: null },
    {
      index: 3,
      token: token(2, "</s>", true),
      generated_text: " deep learning",
      details: { finish_reason: "eos_token", generated_tokens: 3, seed: null },
    },
  ]);
  assert.deepEqual(o.texts, [" deep", " learning", ""]);
  assert.ok(o.ended);
  assert.deepEqual([o.t.usage, o.t.outputTokens, o.t.serverInputTokens], [true, 3, -1]);
  const whole = read("tgi", [{
    generated_text: "Deep learning is",
    details: { finish_reason: "length", generated_tokens: 3 },
  }]);
  assert.deepEqual(whole.texts, ["Deep learning is"]);
  assert.equal(whole.t.outputTokens, 3);
});

Deno.test("SGLang: events repeating the text so far give their new part; meta_info the counts", () => {
  const meta = (n: number) => ({ prompt_tokens: 7, completion_tokens: n, cached_tokens: 0 });
  const o = read("sglang", [
    { text: " Paris", meta_info: meta(1) },
    { text: " Paris is", meta_info: meta(2) },
    { text: " Paris is the capital", meta_info: meta(4) },
  ]);
  assert.deepEqual(o.texts, [" Paris", " is", " the capital"]);
  assert.deepEqual([o.t.serverInputTokens, o.t.outputTokens], [7, 4]);
  // --incremental-streaming-output: each event its own text.
  const incremental = read("sglang", [
    { text: "A", meta_info: meta(1) },
    { text: "B", meta_info: meta(2) },
  ]);
  assert.deepEqual(incremental.texts, ["A", "B"]);
});

Deno.test("template: JSON paths of the text and the counts, in events and in whole answers", () => {
  const fields = {
    text: "content",
    tokens: "tokens_predicted",
    promptTokens: "tokens_evaluated",
  };
  const o = read("template", [
    { index: 0, content: "ust", stop: false, tokens_predicted: 1, tokens_evaluated: 4 },
    { index: 0, content: " espe", stop: false, tokens_predicted: 2, tokens_evaluated: 4 },
    { index: 0, content: "", stop: true, tokens_predicted: 2, tokens_evaluated: 4 },
  ], fields);
  assert.deepEqual(o.texts, ["ust", " espe"]);
  assert.deepEqual([o.t.usage, o.t.serverInputTokens, o.t.outputTokens], [true, 4, 2]);
  // Without response_field the text is looked for where APIs put it.
  const auto = read("template", [{ choices: [{ message: { content: "found" } }] }]);
  assert.deepEqual(auto.texts, ["found"]);
  assert.equal(auto.t.usage, false);
  const nested = read("template", [{ out: [{ gen: { text: "deep" } }], n: { k: 3 } }], {
    text: "out[0].gen.text",
    tokens: "n.k",
  });
  assert.deepEqual([nested.texts, nested.t.outputTokens], [["deep"], 3]);
});
