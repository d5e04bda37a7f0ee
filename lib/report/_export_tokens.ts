/**
 * The profile export's token counts of LLM requests, kept in columns beside
 * the writer's own until a flush serializes them: tokens per response, per
 * request, and whether the server's usage field gave them; the server's count
 * of the prompt and the responses that carried reasoning.
 */
import { isTokenTiming, type RequestTiming } from "../types/timing.ts";

export class TokenColumns {
  /** Output and input tokens per record, NaN for requests that are not token streams. */
  readonly #output: number[] = [];
  readonly #input: number[] = [];
  readonly #usage: boolean[] = [];
  /** The server's prompt tokens (-1: none) and the chunks with reasoning, per record. */
  readonly #serverInput: number[] = [];
  readonly #reasoningChunks: number[] = [];
  /** Tokens of each response, in the order of the writer's response times; NaN where not counted. */
  readonly #perResponse: number[] = [];

  /**
   * The next record, a valid request's `timing` (undefined for a failed one)
   * with `responses` response times; hot path, allocates nothing.
   */
  add(timing: RequestTiming | undefined, responses: number): void {
    const tokens = timing !== undefined && isTokenTiming(timing) ? timing : undefined;
    const chunks = tokens?.chunkTokens;
    const counted = chunks !== undefined && chunks.length === responses;
    for (let i = 0; i < responses; i++) this.#perResponse.push(counted ? chunks[i] : NaN);
    let output = tokens?.outputTokens ?? NaN;
    if (tokens !== undefined && !tokens.usage && chunks !== undefined) {
      output = 0;
      for (const n of chunks) output += n;
    }
    this.#output.push(output);
    this.#input.push(tokens?.inputTokens ?? NaN);
    this.#usage.push(tokens?.usage ?? false);
    this.#serverInput.push(tokens?.serverInputTokens ?? -1);
    this.#reasoningChunks.push(tokens?.reasoningChunks ?? 0);
  }

  /** The JSON fields of record `i`, whose responses start at `first`; "" for other requests. */
  json(i: number, responses: { first: number; count: number }): string {
    const output = this.#output[i];
    if (Number.isNaN(output)) return "";
    const perResponse = this.#perResponse.slice(responses.first, responses.first + responses.count);
    let json = perResponse.some(Number.isNaN) ? "" : `,"response_token_counts":[${perResponse}]`;
    json += `,"output_token_count":${output}`;
    const input = this.#input[i];
    if (input >= 0) json += `,"input_token_count":${input}`;
    const server = this.#serverInput[i];
    if (server >= 0) json += `,"server_input_token_count":${server}`;
    const reasoning = this.#reasoningChunks[i];
    if (reasoning > 0) json += `,"reasoning_response_count":${reasoning}`;
    return `${json},"token_count_source":"${this.#usage[i] ? "usage" : "client"}"`;
  }

  clear(): void {
    this.#output.length = 0;
    this.#input.length = 0;
    this.#usage.length = 0;
    this.#serverInput.length = 0;
    this.#reasoningChunks.length = 0;
    this.#perResponse.length = 0;
  }
}
