/** HTTP/2 frame vocabulary (RFC 9113): types, flags, settings, error codes and byte helpers. */

export interface Transport {
  /** Writes all of `bytes`; the session reuses the buffer once the promise settles. */
  write(bytes: Uint8Array): Promise<unknown>;
  close(): void;
}

export const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export const DATA = 0x0;
export const HEADERS = 0x1;
export const PRIORITY = 0x2;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PUSH_PROMISE = 0x5;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;

export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_ENABLE_PUSH = 0x2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;

/** RFC 9113 section 7 error codes used here. */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
} as const;

export const FRAME_HEADER = 9;
export const DEFAULT_WINDOW = 65535;
export const DEFAULT_MAX_FRAME = 16384;
export const MAX_WINDOW = 2 ** 31 - 1;
/** What we let the peer send before it must wait for a WINDOW_UPDATE: large, we read eagerly. */
export const RECEIVE_WINDOW = 2 ** 30;
export const RECEIVE_MAX_FRAME = 2 ** 18;
export const MAX_STREAM_ID = 2 ** 31 - 1;

/** The connection failed or the peer broke the protocol; every open stream ends with it. */
export class Http2Error extends Error {
  override name = "Http2Error";
  constructor(message: string, readonly code: number = ErrorCode.PROTOCOL_ERROR) {
    super(message);
  }
}

/** The peer reset one stream (RST_STREAM), or a GOAWAY excluded it (retryable). */
export class StreamResetError extends Error {
  override name = "StreamResetError";
  constructor(message: string, readonly code: number, readonly retryable = false) {
    super(message);
  }
}

export function unpad(payload: Uint8Array): Uint8Array {
  if (payload.length === 0) throw new Http2Error("Padded frame without a pad length");
  const pad = payload[0];
  if (pad >= payload.length) throw new Http2Error("Padding exceeds the frame payload");
  return payload.subarray(1, payload.length - pad);
}

export function readUint32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

export function writeUint32(bytes: Uint8Array, at: number, value: number): number {
  bytes[at] = value >>> 24;
  bytes[at + 1] = (value >>> 16) & 0xff;
  bytes[at + 2] = (value >>> 8) & 0xff;
  bytes[at + 3] = value & 0xff;
  return at + 4;
}

const ERROR_NAMES = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
];

/** "REFUSED_STREAM" for 7, "0x42" for codes RFC 9113 does not name. */
export function errorName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}
