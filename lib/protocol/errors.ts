/**
 * Typed errors. main.ts maps them to exit codes; everything else treats them
 * as data (a failed request is counted, not fatal).
 */

/** The server answered with an error (HTTP 4xx/5xx or a gRPC status). */
export class InferError extends Error {
  override name = "InferError";
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** Connecting, reading or writing failed (refused, reset, closed early). */
export class ConnectionError extends Error {
  override name = "ConnectionError";
  constructor(message: string, readonly address: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** No answer within the allowed time. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
  constructor(message: string, readonly timeoutMs: number) {
    super(message);
  }
}

/** The peer sent bytes that do not follow the protocol. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/**
 * The server lacks what an option needs (Triton's trace extension, a metrics
 * endpoint): the option cannot work against it, whatever the user fixes on the
 * command line.
 */
export class ServerFeatureError extends Error {
  override name = "ServerFeatureError";
}

/**
 * A server's error message as one line: Triton ends some with ". " and
 * backends may send several lines, but a failed request is reported (and
 * grouped) on one line.
 */
export function oneLine(message: string): string {
  return message.replace(/\s+/g, " ").trim();
}
