/**
 * A raw-TCP HTTP/1.1 server with the canned KServe v2 responses that notes
 * when the first infer request arrives and keeps its exact bytes: start-up
 * is measured to that moment, and wrk replays those bytes.
 */
import { CANNED_MODELS, type CannedResponse, cannedResponses } from "./targets.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEAD_END = encoder.encode("\r\n\r\n");

export interface ProbeServer {
  addr: string;
  /** performance.now() when the first POST finished arriving, and its raw bytes. */
  firstInfer: Promise<{ atMs: number; bytes: Uint8Array }>;
  close(): Promise<void>;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function encodeResponse(r: CannedResponse | undefined): Uint8Array {
  const status = r ? "200 OK" : "404 Not Found";
  const body = r?.body ?? `{"error":"not found"}`;
  const headers = Object.entries(r?.headers ?? { "Content-Type": "application/json" })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return encoder.encode(
    `HTTP/1.1 ${status}\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`,
  );
}

export function startProbe(): ProbeServer {
  const responses = new Map(
    cannedResponses(CANNED_MODELS).map((r) => [`${r.method} ${r.path}`, encodeResponse(r)]),
  );
  const notFound = encodeResponse(undefined);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connections = new Set<Deno.Conn>();
  let resolveFirst: (value: { atMs: number; bytes: Uint8Array }) => void;
  const firstInfer = new Promise<{ atMs: number; bytes: Uint8Array }>((r) => resolveFirst = r);

  async function serve(conn: Deno.Conn): Promise<void> {
    let pending: Uint8Array = new Uint8Array(0);
    const chunk = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const end = indexOf(pending, HEAD_END, 0);
        if (end >= 0) {
          const head = decoder.decode(pending.subarray(0, end));
          const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
          const total = end + HEAD_END.length + length;
          if (pending.length >= total) {
            const [method, path] = head.split(" ", 2);
            if (method === "POST") {
              resolveFirst({ atMs: performance.now(), bytes: pending.slice(0, total) });
            }
            await conn.write(responses.get(`${method} ${path}`) ?? notFound);
            pending = pending.slice(total);
            continue;
          }
        }
        const n = await conn.read(chunk);
        if (n === null) return;
        pending = concat(pending, chunk.subarray(0, n));
      }
    } catch {
      // The client went away mid-request: nothing to answer.
    } finally {
      connections.delete(conn);
      try {
        conn.close();
      } catch {
        // Already closed by close().
      }
    }
  }

  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        connections.add(conn);
        serve(conn);
      }
    } catch {
      // The listener was closed.
    }
  })();

  return {
    addr: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    firstInfer,
    async close() {
      listener.close();
      for (const conn of connections) conn.close();
      await accepting;
    },
  };
}
