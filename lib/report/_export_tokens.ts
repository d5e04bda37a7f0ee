/**
 * The profile export's token counts of LLM requests (inferperf's own fields,
 * prefixed so that no reader of perf_analyzer's format takes them for its
 * own), kept in columns beside the writer's own until a flush serializes
 * them. Output tokens are counted as the console counts them: the server's
 * usage, else the tokenizer's count of the whole output text, else the
 * chunks with output. Also the server's count of the prompt and the
 * responses that carried reasoning.
 */
import type { Tokenizer } from "../input/tokenizer.ts";
import { isTokenTiming, type RequestTiming } from "../types/timing.ts";

export class TokenColumns {
  readonly #tokenizer: Tokenizer | undefined;
  /** Output tokens per record as the client saw them (usage, else chunks); NaN: not a token stream. */
  readonly #output: number[] = [];
  /** The output text the tokenizer counts at serialization, when the server sent no usage. */
  readonly #texts: (string | undefined)[] = [];
  readonly #input: number[] = [];
  readonly #usage: boolean[] = [];
  /** The server's prompt tokens (-1: none) and the chunks with reasoning, per record. */
  readonly #serverInput: number[] = [];
  readonly #reasoningChunks: number[] = [];

  constructor(tokenizer: Tokenizer | undefined) {
    this.#tokenizer = tokenizer;
  }

  /** The next record, a valid request's `timing` (undefined for a failed one); hot path. */
  add(timing: RequestTiming | undefined): void {
    const tokens = timing !== undefined && isTokenTiming(timing) ? timing : undefined;
    this.#output.push(tokens?.outputTokens ?? NaN);
    this.#texts.push(tokens !== undefined && !tokens.usage ? tokens.outputText : undefined);
    this.#input.push(tokens?.inputTokens ?? NaN);
    this.#usage.push(tokens?.usage ?? false);
    this.#serverInput.push(tokens?.serverInputTokens ?? -1);
    this.#reasoningChunks.push(tokens?.reasoningChunks ?? 0);
  }

  /** The JSON fields of record `i`; "" for requests that are not token streams. */
  json(i: number): string {
    let output = this.#output[i];
    if (Number.isNaN(output)) return "";
    const text = this.#texts[i];
    let source = "usage";
    if (!this.#usage[i]) {
      source = "chunks";
      if (text !== undefined && this.#tokenizer !== undefined) {
        output = this.#tokenizer.count(text);
        source = "tokenizer";
      }
    }
    let json = `,"inferperf_output_tokens":${output}`;
    const input = this.#input[i];
    if (input >= 0) json += `,"inferperf_input_tokens":${input}`;
    const server = this.#serverInput[i];
    if (server >= 0) json += `,"inferperf_server_input_tokens":${server}`;
    const reasoning = this.#reasoningChunks[i];
    if (reasoning > 0) json += `,"inferperf_reasoning_responses":${reasoning}`;
    return `${json},"inferperf_token_source":"${source}"`;
  }

  clear(): void {
    this.#output.length = 0;
    this.#texts.length = 0;
    this.#input.length = 0;
    this.#usage.length = 0;
    this.#serverInput.length = 0;
    this.#reasoningChunks.length = 0;
  }
}
