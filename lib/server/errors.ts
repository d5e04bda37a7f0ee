/** Errors of the simulated inference core, independent of the transport. */

/**
 * What went wrong, in terms every front end maps to its own status
 * (HTTP status, gRPC code).
 */
export type ServerErrorCode = "invalid_argument" | "not_found" | "unavailable" | "internal";

export class ServerError extends Error {
  override name = "ServerError";
  constructor(message: string, readonly code: ServerErrorCode) {
    super(message);
  }
}

/** Triton's wording, shared by every protocol front end. */
export function unknownModel(name: string, version?: string): ServerError {
  return new ServerError(
    version === undefined
      ? `Request for unknown model: '${name}' is not found`
      : `Request for unknown model: '${name}' version ${version} is not found`,
    "not_found",
  );
}
