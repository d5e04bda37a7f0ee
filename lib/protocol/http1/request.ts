/** Encoding a complete HTTP/1.1 request once, for sending many times. */

export interface RequestOptions {
  /** Value of the Host header, unless `headers` sets one. */
  host: string;
  /** Extra header fields (e.g. -H); Content-Length and Transfer-Encoding are the client's. */
  headers?: Record<string, string>;
  body?: Uint8Array;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_VALUE = /[\r\n\0]/;
const FRAMING = new Set(["content-length", "transfer-encoding"]);
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const encoder = new TextEncoder();

/** Request line, headers and body as one buffer, ready for a single write. */
export function buildRequest(method: string, path: string, options: RequestOptions): Uint8Array {
  if (!TOKEN.test(method)) throw new TypeError(`Invalid HTTP method "${method}"`);
  if (!path.startsWith("/") || /[\s\0]/.test(path)) {
    throw new TypeError(`Invalid request path "${path}"`);
  }
  let fields = "";
  let hasHost = false;
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name "${name}"`);
    if (FORBIDDEN_VALUE.test(value)) {
      throw new TypeError(`Invalid value for header "${name}": line breaks are not allowed`);
    }
    const lower = name.toLowerCase();
    if (FRAMING.has(lower)) throw new TypeError(`Header "${name}" is set by the client`);
    if (lower === "host") hasHost = true;
    fields += `${name}: ${value}\r\n`;
  }
  const host = hasHost ? "" : `Host: ${options.host}\r\n`;
  const body = options.body;
  const length = body !== undefined || BODY_METHODS.has(method)
    ? `Content-Length: ${body?.byteLength ?? 0}\r\n`
    : "";
  const headBytes = encoder.encode(`${method} ${path} HTTP/1.1\r\n${host}${fields}${length}\r\n`);
  if (body === undefined || body.byteLength === 0) return headBytes;
  const bytes = new Uint8Array(headBytes.byteLength + body.byteLength);
  bytes.set(headBytes);
  bytes.set(body, headBytes.byteLength);
  return bytes;
}
