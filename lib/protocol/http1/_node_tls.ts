/**
 * --ssl-https-verify-peer 0: TLS through node:tls, the only client of the
 * runtime that can skip the certificate chain check (Deno.connectTls cannot;
 * its --unsafely-ignore-certificate-errors is a flag of the whole process).
 * Loaded for such connections only. As curl does for perf_analyzer, the host
 * name is still checked unless --ssl-https-verify-host 0.
 */
import type { TLSSocket } from "node:tls";
import type { ByteConn, TlsOptions } from "./_tls_types.ts";

/** A node error message as a clause. */
const describe = (error: Error) => error.message.charAt(0).toLowerCase() + error.message.slice(1);

/** What is read ahead of the reader before the socket is paused. */
const READ_AHEAD = 1 << 20;

/** A node:tls socket read and written as a Deno connection. */
class NodeTlsConn implements ByteConn {
  readonly #socket: TLSSocket;
  readonly #chunks: Uint8Array[] = [];
  /** Bytes of #chunks[0] already read. */
  #offset = 0;
  #queued = 0;
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(socket: TLSSocket) {
    this.#socket = socket;
    socket.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued > READ_AHEAD) socket.pause();
      this.#notify();
    });
    socket.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    socket.on("close", () => {
      this.#ended = true;
      this.#notify();
    });
    socket.on("error", (error: Error) => {
      this.#error = error;
      this.#notify();
    });
  }

  async read(buffer: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#error) throw this.#error;
      if (this.#ended) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    let n = 0;
    while (n < buffer.length && this.#chunks.length > 0) {
      const chunk = this.#chunks[0];
      const take = Math.min(buffer.length - n, chunk.length - this.#offset);
      buffer.set(chunk.subarray(this.#offset, this.#offset + take), n);
      n += take;
      this.#offset += take;
      if (this.#offset === chunk.length) {
        this.#chunks.shift();
        this.#offset = 0;
      }
    }
    this.#queued -= n;
    if (this.#queued <= READ_AHEAD) this.#socket.resume();
    return n;
  }

  write(bytes: Uint8Array): Promise<number> {
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) =>
      this.#socket.write(bytes, (error) => error ? reject(error) : resolve(bytes.length))
    );
  }

  close(): void {
    this.#socket.destroy();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/**
 * Connects and completes the handshake without verifying the server's
 * certificate chain; the host name is checked unless `verifyHostname` is false.
 */
export async function connectUnverified(
  target: { hostname: string; port: number },
  tls: TlsOptions & { signal: AbortSignal },
): Promise<ByteConn> {
  const { checkServerIdentity, connect } = await import("node:tls");
  const { isIP } = await import("node:net");
  const socket = connect({
    host: target.hostname,
    port: target.port,
    // SNI takes names only.
    ...(isIP(target.hostname) ? {} : { servername: target.hostname }),
    rejectUnauthorized: false,
    ...(tls.caCerts ? { ca: tls.caCerts } : {}),
    ...(tls.cert !== undefined && tls.key !== undefined ? { cert: tls.cert, key: tls.key } : {}),
    ...(tls.alpnProtocols ? { ALPNProtocols: tls.alpnProtocols } : {}),
  });
  const conn = new NodeTlsConn(socket);
  // The connect timeout gave up: the socket goes, whatever state it is in.
  tls.signal.addEventListener("abort", () => socket.destroy(), { once: true });
  let connected = false;
  socket.once("connect", () => connected = true);
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error & { code?: string }) =>
      reject(
        connected
          ? new Error(`TLS handshake failed: ${describe(error)}`)
          // Deno's own words for it, as the other connections say it.
          : error.code === "ECONNREFUSED"
          ? new Error("Connection refused")
          : error,
      );
    socket.once("secureConnect", resolve);
    socket.once("error", fail);
    socket.once("close", () => fail(new Error("the server closed the connection")));
  });
  socket.setNoDelay(true);
  if (tls.verifyHostname !== false) {
    const mismatch = checkServerIdentity(target.hostname, socket.getPeerCertificate());
    if (mismatch) {
      conn.close();
      throw new Error(`${mismatch.message} (--ssl-https-verify-host 0 skips this check)`);
    }
  }
  return conn;
}
