/** Byte transports under an HTTP/2 session: a Deno connection, or a node:tls socket (server). */
import type { ByteConn } from "../http1/connect.ts";
import type { Http2Session, Transport } from "./http2.ts";

const READ_BUFFER = 64 * 1024;

/** Writes through a Deno connection, looping over short writes. */
export function connTransport(conn: ByteConn): Transport {
  return {
    async write(bytes: Uint8Array): Promise<void> {
      let offset = 0;
      while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
    },
    close(): void {
      try {
        conn.close();
      } catch {
        // Already closed: a failed read or write closes the resource.
      }
    },
  };
}

/**
 * Feeds everything read from `conn` to `session` until the connection ends;
 * never rejects. The read buffer is reused: the session copies what it keeps.
 */
export async function pump(conn: ByteConn, session: Http2Session): Promise<void> {
  const buffer = new Uint8Array(READ_BUFFER);
  let failure: Error | undefined;
  try {
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      session.receive(buffer.subarray(0, n));
    }
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  session.transportClosed(failure);
  try {
    conn.close();
  } catch {
    // The session closed it already.
  }
}

/** The node:tls socket methods the server uses. */
export interface NodeSocket {
  write(data: Uint8Array, callback: (error?: Error | null) => void): boolean;
  destroy(): void;
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "close", listener: () => void): unknown;
}

/** Writes through a node:tls socket (the server's mutual-TLS path). */
export function socketTransport(socket: NodeSocket): Transport {
  return {
    write: (bytes) =>
      new Promise<void>((resolve, reject) =>
        socket.write(bytes, (error) => error ? reject(error) : resolve())
      ),
    close: () => socket.destroy(),
  };
}

/** Feeds a node:tls socket's data to `session`; resolves when the socket closes. */
export function pumpSocket(socket: NodeSocket, session: Http2Session): Promise<void> {
  return new Promise((resolve) => {
    let failure: Error | undefined;
    // Chunks are pooled Buffers, whose slice() does not copy: hand on plain views.
    socket.on(
      "data",
      (chunk) => session.receive(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
    );
    socket.on("error", (error) => {
      failure = error;
    });
    socket.on("close", () => {
      session.transportClosed(failure);
      resolve();
    });
  });
}
