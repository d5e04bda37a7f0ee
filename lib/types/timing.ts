/** The timing of each request, as sessions fill it and recorders read it. */

/**
 * Per-request timing filled in by a session. All values are performance.now()
 * milliseconds. The load generator allocates one per slot and reuses it, so the
 * hot path allocates nothing for timing.
 */
export interface RequestTiming {
  /** Before encoding/writing the request. */
  start: number;
  /** The request is fully written. */
  sendEnd: number;
  /** First byte of the (last) response arrived. */
  recvStart: number;
  /** The (last) response is fully read and parsed. */
  end: number;
  /** Responses received for this request (1 for unary). */
  responses: number;
  /**
   * The first response was fully read (decoupled models send several). Clients
   * that always answer with one response leave it unset: it is then `end`.
   */
  firstResponse?: number;
}

/**
 * The timing of a token-streaming request (--service-kind openai), which the
 * session fills beside RequestTiming's fields: `firstResponse` is the first
 * token's arrival and `responses` counts the chunks that carried output.
 */
export interface TokenTiming extends RequestTiming {
  /** Output tokens: the server's usage count, else the chunks with output. */
  outputTokens: number;
  /** Prompt tokens: the tokenizer's count of the prompt's own text; -1 without a tokenizer. */
  inputTokens: number;
  /** The counts came from the server's usage field. */
  usage: boolean;
  /**
   * Prompt tokens as the server's usage counts them (chat template included);
   * -1 (or absent) without usage.
   */
  serverInputTokens?: number;
  /** Arrival of the second and the last chunk with output (performance.now() ms). */
  secondResponse?: number;
  lastResponse?: number;
  /** Chunks with output that carried reasoning (`reasoning_content`). */
  reasoningChunks?: number;
  /** The usage field's reasoning tokens (completion_tokens_details), else -1. */
  reasoningUsage?: number;
  /** The usage field's cached prompt tokens (prompt_tokens_details.cached_tokens), else -1. */
  cachedTokens?: number;
  /** The output length the request asked for (max_tokens), else -1. */
  requestedTokens?: number;
  /** The reasoning text, kept for the tokenizer (like `outputText`). */
  reasoningText?: string;
  /** The model the request named, when a run sends to several (-m A,B). */
  model?: string;
  /**
   * performance.now() of each chunk with output. Absent where requests come
   * from worker threads (their records carry counts, not lists).
   */
  chunkTimes?: number[];
  /** The output text, kept for the tokenizer when the server sent no usage. */
  outputText?: string;
  /** False for an answer that came in one piece (no stream): no first-token figures. */
  streamed?: boolean;
  /** --session-concurrency: the session and the turn (from 0) the request was. */
  sessionId?: string;
  turnIndex?: number;
}

export function isTokenTiming(timing: RequestTiming): timing is TokenTiming {
  return (timing as Partial<TokenTiming>).outputTokens !== undefined;
}

/**
 * One completed request as a Recorder hands it to its RequestSink. The
 * recorder refills one object for every request: copy what you keep. The
 * timing object is the load's, one per slot, so it also identifies the slot.
 */
export interface CompletedRequest {
  /** Absent for a failed request whose load did not pass it (or that was never sent). */
  timing: RequestTiming | undefined;
  /** Open-loop loads: when the request was due (performance.now() ms). */
  intendedMs: number | undefined;
  /** The failure message of a failed request. */
  error: string | undefined;
}

/**
 * Receives every completed request, valid or failed, in completion order
 * (the profile export). Called from the request loop: implementations keep
 * references in preallocated storage and do their work elsewhere.
 */
export interface RequestSink {
  add(request: CompletedRequest): void;
  /**
   * The recorder ended a window at `atMs` (performance.now()): the requests
   * added since the previous call are the ones it counted in that window,
   * whose `endMs` is `atMs` (warmup and the tail after the last window are
   * such stretches too, that no reported window ends at).
   */
  rotated?(atMs: number): void;
}
