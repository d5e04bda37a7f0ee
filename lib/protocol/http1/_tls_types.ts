/** The TLS settings and connection shape shared by connect.ts and its node:tls fallback. */

export interface TlsOptions {
  /** PEM root certificates trusted in addition to the default roots. */
  caCerts?: string[];
  /** PEM client certificate chain and private key for mutual TLS. */
  cert?: string;
  key?: string;
  /** Check the certificate names the host (default true). */
  verifyHostname?: boolean;
  /** Check the server's certificate chain (default true; false: --ssl-https-verify-peer 0). */
  verifyPeer?: boolean;
  /** ALPN protocols to offer (gRPC servers want "h2"). */
  alpnProtocols?: string[];
}

/** What the clients use of a connection: a Deno.Conn, or node:tls behind the same methods. */
export type ByteConn = Pick<Deno.Conn, "read" | "write" | "close">;
