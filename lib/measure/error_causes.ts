/**
 * The error summary: failed requests grouped by cause (an HTTP status, an
 * error event in the stream, a lost connection...), as AIPerf's error
 * summary groups them by code and type, rather than by their full message
 * (which names addresses and server text). Derived from the messages the
 * windows keep, so it costs nothing on the request loop.
 */

/** A cause, the failed requests it explains, and its most frequent message as an example. */
export interface ErrorCause {
  cause: string;
  count: number;
  example: string;
}

/** Message patterns, first match wins: the cause's name, or a function of the match. */
const CAUSES: ReadonlyArray<readonly [RegExp, string | ((m: RegExpExecArray) => string)]> = [
  // HTTP clients: "Server returned 503: ..."; gRPC: "Server returned UNAVAILABLE: ...".
  [/^Server returned (\d{3}):/, (m) => `HTTP ${m[1]}`],
  [/^Server returned ([A-Z_]+):/, (m) => `gRPC ${m[1]}`],
  [/^Server answered HTTP (\d{3}) instead of a gRPC response/, (m) => `HTTP ${m[1]}`],
  [/^Server sent an error: /, "error event in the stream"],
  [/^The stream ended without data: \[DONE\]/, "stream ended without [DONE]"],
  [/^The stream ended without /, "stream ended without its last event"],
  [/timed out after \d+ ms/, "timeout"],
  [/^Abandoned: /, "abandoned (--stall-timeout)"],
  [/^Connection to ".*" closed (in the middle of|before)/, "connection closed by the server"],
  [/^Cannot connect to /, "cannot connect"],
  [/^Connection to ".*" (failed|is closed)|^Client for ".*" is closed/, "connection failed"],
  [/^Output doesn't match expected output:/, "output mismatch"],
  [
    /^(Invalid|Malformed|Unexpected|Truncated|Unsupported) |^Expected a JSON object|exceeds \d+ (bytes|characters)|^Server ended the call without|^The server (sent|ended)/,
    "protocol error",
  ],
];

/** The cause of one failure message. */
export function errorCause(message: string): string {
  for (const [pattern, name] of CAUSES) {
    const match = pattern.exec(message);
    if (match !== null) return typeof name === "string" ? name : name(match);
  }
  return "other";
}

/**
 * `errors` ([message, count], most frequent first, as summaries keep them)
 * grouped by cause, most frequent cause first.
 */
export function errorCauses(errors: ReadonlyArray<readonly [string, number]>): ErrorCause[] {
  const byCause = new Map<string, ErrorCause>();
  for (const [message, count] of errors) {
    const cause = errorCause(message);
    const entry = byCause.get(cause);
    if (entry === undefined) byCause.set(cause, { cause, count, example: message });
    else entry.count += count;
  }
  return [...byCause.values()].sort((a, b) =>
    b.count - a.count || (a.cause < b.cause ? -1 : a.cause > b.cause ? 1 : 0)
  );
}
