/**
 * gRPC over HTTP/2 framing shared by the client and the reference server:
 * length-prefixed messages, compression, status codes, metadata encoding.
 */

// A dynamic import: `deno bundle` hoists static imports of Node built-ins to the top of the
// bundle, which would load zlib at every start-up rather than with the gRPC modules.
const { deflateSync, gunzipSync, gzipSync, inflateSync } = await import("node:zlib");

/** The KServe v2 gRPC service. */
export const SERVICE_PATH = "/inference.GRPCInferenceService/";

export type Compression = "none" | "gzip" | "deflate";

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

const STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? `status ${code}`;
}

/** Messages larger than this are refused (the gRPC default is 4 MiB; tensors are bigger). */
export const MAX_MESSAGE = 2 ** 30;

/** A malformed gRPC message stream. */
export class GrpcFramingError extends Error {
  override name = "GrpcFramingError";
}

/** The 5-byte prefix (compressed flag, big-endian length) followed by the message. */
export function frameMessage(message: Uint8Array, compressed: boolean): Uint8Array {
  const framed = new Uint8Array(5 + message.length);
  framed[0] = compressed ? 1 : 0;
  new DataView(framed.buffer).setUint32(1, message.length);
  framed.set(message, 5);
  return framed;
}

/** Compresses a message body for `grpc-encoding`; "deflate" is the zlib format, as gRPC means it. */
export function compress(algorithm: Compression, message: Uint8Array): Uint8Array {
  if (algorithm === "gzip") return new Uint8Array(gzipSync(message));
  if (algorithm === "deflate") return new Uint8Array(deflateSync(message));
  return message;
}

export function decompress(algorithm: string, message: Uint8Array): Uint8Array {
  try {
    if (algorithm === "gzip") return new Uint8Array(gunzipSync(message));
    if (algorithm === "deflate") return new Uint8Array(inflateSync(message));
  } catch (error) {
    throw new GrpcFramingError(
      `Cannot decompress a ${algorithm} message: ${(error as Error).message}`,
    );
  }
  throw new GrpcFramingError(`Unsupported grpc-encoding "${algorithm}"`);
}

/**
 * Reassembles length-prefixed messages from DATA payloads. A message that
 * arrives whole in one payload is passed on as a view (no copy); the view is
 * valid only during the callback.
 */
export class MessageReader {
  /**
   * Uncompressed messages longer than this are passed on as their first
   * `headLimit` bytes (with `truncated`) once their last byte arrived: a
   * reader that needs only the fields before a large tensor saves the
   * allocation and copy of the rest.
   */
  headLimit = Infinity;
  #prefix = new Uint8Array(5);
  #prefixLength = 0;
  #message: Uint8Array | undefined;
  #filled = 0;
  /** Bytes of the current message still to drop after its head. */
  #skip = 0;
  #truncated = false;
  #compressed = false;

  constructor(
    readonly onMessage: (message: Uint8Array, compressed: boolean, truncated: boolean) => void,
  ) {}

  /** True between messages (nothing partial buffered). */
  get idle(): boolean {
    return this.#prefixLength === 0 && this.#message === undefined;
  }

  reset(): void {
    this.#prefixLength = 0;
    this.#message = undefined;
    this.#filled = 0;
    this.#skip = 0;
  }

  push(data: Uint8Array): void {
    let pos = 0;
    while (pos < data.length) {
      if (this.#message === undefined) {
        if (this.#prefixLength === 0 && data.length - pos >= 5) {
          const length = readLength(data, pos + 1);
          const compressed = data[pos] === 1;
          if (data.length - pos - 5 >= length) {
            this.onMessage(data.subarray(pos + 5, pos + 5 + length), compressed, false);
            pos += 5 + length;
            continue;
          }
          this.#start(length, compressed);
          pos += 5;
          continue;
        }
        const take = Math.min(5 - this.#prefixLength, data.length - pos);
        this.#prefix.set(data.subarray(pos, pos + take), this.#prefixLength);
        this.#prefixLength += take;
        pos += take;
        if (this.#prefixLength < 5) return;
        this.#prefixLength = 0;
        this.#start(readLength(this.#prefix, 1), this.#prefix[0] === 1);
        if (this.#message!.length === 0) this.#finish();
        continue;
      }
      const message = this.#message;
      if (this.#filled < message.length) {
        const take = Math.min(message.length - this.#filled, data.length - pos);
        message.set(data.subarray(pos, pos + take), this.#filled);
        this.#filled += take;
        pos += take;
      } else {
        const drop = Math.min(this.#skip, data.length - pos);
        this.#skip -= drop;
        pos += drop;
      }
      if (this.#filled === message.length && this.#skip === 0) this.#finish();
    }
  }

  #start(length: number, compressed: boolean): void {
    if (length > MAX_MESSAGE) {
      throw new GrpcFramingError(
        `Message of ${length} bytes exceeds the ${MAX_MESSAGE}-byte limit`,
      );
    }
    // A compressed message is only readable whole.
    const kept = compressed ? length : Math.min(length, this.headLimit);
    this.#message = new Uint8Array(kept);
    this.#filled = 0;
    this.#skip = length - kept;
    this.#truncated = kept < length;
    this.#compressed = compressed;
  }

  #finish(): void {
    const message = this.#message!;
    this.#message = undefined;
    this.onMessage(message, this.#compressed, this.#truncated);
  }
}

function readLength(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

/** grpc-message: percent-encodes everything outside printable ASCII and "%". */
export function encodeGrpcMessage(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function decodeGrpcMessage(text: string): string {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** grpc-timeout: at most 8 digits and a unit. */
export function formatTimeout(ms: number): string {
  if (ms < 1e8) return `${Math.max(1, Math.ceil(ms))}m`;
  return `${Math.ceil(ms / 1000)}S`;
}

/** Milliseconds of a grpc-timeout value, undefined when malformed. */
export function parseTimeout(text: string): number | undefined {
  const match = /^(\d{1,8})([HMSmun])$/.exec(text);
  if (match === null) return undefined;
  const value = Number(match[1]);
  const factor = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[match[2]]!;
  return value * factor;
}

/** Metadata keys that are HTTP/2 or gRPC protocol headers and cannot be set by users. */
export const RESERVED_METADATA = new Set([
  "content-type",
  "te",
  "grpc-encoding",
  "grpc-accept-encoding",
  "grpc-timeout",
  "user-agent",
  "host",
  "connection",
  "transfer-encoding",
]);
