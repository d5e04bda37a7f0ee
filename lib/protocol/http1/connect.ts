/** Opening the byte stream under an HTTP/1.1 connection: plain TCP or TLS. */
import { ConnectionError, TimeoutError } from "../errors.ts";
import type { ByteConn, TlsOptions } from "./_tls_types.ts";

export type { ByteConn, TlsOptions };

/** Where and how to connect; shared by hot-path connections and control-plane requests. */
export interface Endpoint {
  hostname: string;
  port: number;
  /** Connect over TLS when set. */
  tls?: TlsOptions;
  /** Default 5000. */
  connectTimeoutMs?: number;
  /** Limit for one request, from writing it to reading the end of the response; none by default. */
  requestTimeoutMs?: number;
}

/** Opens the stream for an endpoint, failing with ConnectionError or TimeoutError naming it. */
export type Connector = (endpoint: Endpoint) => Promise<ByteConn>;

export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/** "host:port", with IPv6 literals in brackets. */
export function formatAddress(hostname: string, port: number): string {
  return hostname.includes(":") && !hostname.startsWith("[")
    ? `[${hostname}]:${port}`
    : `${hostname}:${port}`;
}

/** "Connection refused (os error 111)" -> "connection refused". */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // rustls's words (and a link to its manual) for a peer that hung up mid-TLS: gRPC servers that
  // require a client certificate do so right after the handshake when none was sent.
  if (/peer closed connection without sending TLS close_notify/.test(text)) {
    return "the server closed the TLS connection (as a server that requires a client " +
      "certificate does when none is sent)";
  }
  const plain = text.replace(/\s*\(os error \d+\)$/, "");
  const why = CERTIFICATE_REASONS.find(([pattern]) => pattern.test(plain))?.[1];
  return plain.charAt(0).toLowerCase() + plain.slice(1) + (why ? ` (${why})` : "");
}

/** Server certificates rustls refuses whatever the CA: what its terse names mean. */
const CERTIFICATE_REASONS: ReadonlyArray<[RegExp, string]> = [
  [
    /UnsupportedCertVersion/,
    "the server's certificate is not X.509 v3, the only version the TLS library takes; " +
    "over HTTPS, --ssl-https-verify-peer 0 accepts it",
  ],
  [
    /CaUsedAsEndEntity/,
    "the server presents a CA certificate, as openssl req -x509 makes, which the TLS library " +
    "never accepts from a server; over HTTPS, --ssl-https-verify-peer 0 accepts it",
  ],
];

function connectError(endpoint: Endpoint, error: unknown, what = ""): ConnectionError {
  const address = formatAddress(endpoint.hostname, endpoint.port);
  return new ConnectionError(
    `Cannot connect to "${address}": ${what}${describeError(error)}`,
    address,
    { cause: error },
  );
}

function timeoutError(endpoint: Endpoint, timeoutMs: number): TimeoutError {
  const address = formatAddress(endpoint.hostname, endpoint.port);
  return new TimeoutError(
    `Cannot connect to "${address}": timed out after ${timeoutMs} ms`,
    timeoutMs,
  );
}

/** Deno wants IPv6 literals without brackets. */
function bareHostname(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/** TCP with TCP_NODELAY, since requests are written whole and latency matters. */
export const connectTcp = async (endpoint: Endpoint): Promise<Deno.TcpConn> => {
  const timeoutMs = endpoint.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const conn = await Deno.connect({
      hostname: bareHostname(endpoint.hostname),
      port: endpoint.port,
      signal: controller.signal,
    });
    conn.setNoDelay(true);
    return conn;
  } catch (error) {
    if (controller.signal.aborted) throw timeoutError(endpoint, timeoutMs);
    throw connectError(endpoint, error);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * TLS, with the handshake done inside the connect timeout so certificate
 * problems surface here rather than on the first request. Deno.connectTls
 * takes no abort signal, so the timeout races it and a late connection is
 * closed. Without peer verification the connection is node:tls's.
 */
export const connectTls: Connector = (endpoint) => {
  const timeoutMs = endpoint.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const tls = endpoint.tls ?? {};
  const options: Deno.ConnectTlsOptions = {
    hostname: bareHostname(endpoint.hostname),
    port: endpoint.port,
    caCerts: tls.caCerts,
    unsafelyDisableHostnameVerification: tls.verifyHostname === false,
    alpnProtocols: tls.alpnProtocols,
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    let conn: ByteConn | undefined;
    let handshaking = false;
    // node:tls's socket exists before the handshake ends: the timeout destroys it through this.
    const abandon = new AbortController();
    const timer = setTimeout(() => {
      settled = true;
      conn?.close();
      abandon.abort();
      reject(timeoutError(endpoint, timeoutMs));
    }, timeoutMs);
    const open = async (): Promise<ByteConn> => {
      if (tls.verifyPeer === false) {
        const { connectUnverified } = await import("./_node_tls.ts");
        // Its errors say whether the handshake had begun.
        conn = await connectUnverified(options as { hostname: string; port: number }, {
          ...tls,
          signal: abandon.signal,
        });
        return conn;
      }
      const opened = tls.cert !== undefined && tls.key !== undefined
        ? await Deno.connectTls({ ...options, cert: tls.cert, key: tls.key })
        : await Deno.connectTls(options);
      conn = opened;
      if (settled) {
        opened.close();
        return opened;
      }
      handshaking = true;
      await opened.handshake();
      return opened;
    };
    open().then((opened) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(opened);
    }, (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn?.close();
      reject(connectError(endpoint, error, handshaking ? "TLS handshake failed: " : ""));
    });
  });
};

/** connectTls when the endpoint has TLS options, else connectTcp. */
export const connect: Connector = (endpoint) =>
  endpoint.tls ? connectTls(endpoint) : connectTcp(endpoint);
