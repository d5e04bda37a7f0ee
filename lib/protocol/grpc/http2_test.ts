import assert from "node:assert/strict";
import {
  headerBlock,
  Http2Error,
  Http2Session,
  type Http2Stream,
  type StreamHandler,
  type Transport,
} from "./http2.ts";

/** Two sessions wired back to back in memory; bytes are delivered in `chunk`-sized pieces. */
function pair(
  options: {
    chunk?: number;
    onStream: (s: Http2Session) => (stream: Http2Stream) => StreamHandler;
  },
) {
  const chunk = options.chunk ?? Infinity;
  const peers: { client?: Http2Session } = {};
  const pipe = (target: () => Http2Session): Transport => ({
    write(bytes: Uint8Array) {
      const copy = bytes.slice();
      return Promise.resolve().then(() => {
        for (let i = 0; i < copy.length; i += chunk === Infinity ? copy.length : chunk) {
          target().receive(copy.subarray(i, Math.min(copy.length, i + chunk)));
        }
      });
    },
    close() {
      queueMicrotask(() => target().transportClosed());
    },
  });
  const server: Http2Session = new Http2Session(pipe(() => peers.client!), {
    role: "server",
    onStream: (stream): StreamHandler => options.onStream(server)(stream),
  });
  const client = new Http2Session(pipe(() => server), { role: "client" });
  peers.client = client;
  return { client, server };
}

/** Collects what one stream receives. */
class Collector implements StreamHandler {
  fields: string[][] = [];
  bytes = 0;
  chunks: Uint8Array[] = [];
  ended = Promise.withResolvers<void>();
  error: Error | undefined;

  headers(_s: Http2Stream, fields: readonly string[], endStream: boolean) {
    this.fields.push([...fields]);
    if (endStream) this.ended.resolve();
  }
  data(_s: Http2Stream, data: Uint8Array, endStream: boolean) {
    this.bytes += data.length;
    this.chunks.push(data.slice());
    if (endStream) this.ended.resolve();
  }
  reset(_s: Http2Stream, error: Error) {
    this.error = error;
    this.ended.resolve();
  }
}

const REQUEST = headerBlock([[":method", "POST"], [":path", "/echo"], [":scheme", "http"]]);
const RESPONSE = headerBlock([[":status", "200"]]);
const TRAILERS = headerBlock([["grpc-status", "0"]]);

/** A server that echoes the request body back with trailers. */
function echo(session: Http2Session) {
  return (stream: Http2Stream): StreamHandler => {
    const received: Uint8Array[] = [];
    return {
      headers() {},
      data(_s, data, endStream) {
        received.push(data.slice());
        if (!endStream) return;
        session.sendHeaders(stream, RESPONSE, false);
        for (const part of received) session.sendData(stream, part, false);
        session.sendHeaders(stream, TRAILERS, true);
      },
      reset() {},
    };
  };
}

Deno.test("a request and its echo cross, headers and trailers decoded", async () => {
  const { client, server } = pair({ onStream: echo });
  const collector = new Collector();
  const stream = client.request(collector, REQUEST, false);
  client.sendData(stream, new TextEncoder().encode("hello"), true);
  await collector.ended.promise;
  assert.deepEqual(collector.fields, [[":status", "200"], ["grpc-status", "0"]]);
  assert.equal(new TextDecoder().decode(collector.chunks[0]), "hello");
  assert.equal(client.activeStreams, 0);
  client.close();
  server.close();
});

Deno.test("bodies beyond the 64 KiB default window and frame size flow with credit", async () => {
  const { client, server } = pair({ onStream: echo, chunk: 1000 });
  const body = new Uint8Array(300_000).map((_, i) => i % 251);
  const collectors = [new Collector(), new Collector()];
  for (const c of collectors) client.sendData(client.request(c, REQUEST, false), body, true);
  await Promise.all(collectors.map((c) => c.ended.promise));
  for (const c of collectors) {
    assert.equal(c.error, undefined);
    assert.equal(c.bytes, body.length);
    const joined = new Uint8Array(c.bytes);
    let offset = 0;
    for (const part of c.chunks) {
      joined.set(part, offset);
      offset += part.length;
    }
    assert.deepEqual(joined, body);
  }
  client.close();
  server.close();
});

Deno.test("large header blocks go out as CONTINUATION frames", async () => {
  const { client, server } = pair({ onStream: echo });
  const collector = new Collector();
  const big = headerBlock([[":method", "POST"], [":path", "/echo"], ["x-big", "v".repeat(40_000)]]);
  client.sendData(client.request(collector, big, false), Uint8Array.of(1), true);
  await collector.ended.promise;
  assert.equal(collector.error, undefined);
  assert.equal(collector.bytes, 1);
  client.close();
  server.close();
});

Deno.test("a peer that breaks the protocol fails the streams with Http2Error", async () => {
  const { client, server } = pair({ onStream: () => () => new Collector() });
  const collector = new Collector();
  client.request(collector, REQUEST, false);
  // A DATA frame on stream 0 is a connection error.
  client.receive(Uint8Array.of(0, 0, 1, 0, 0, 0, 0, 0, 0, 42));
  await collector.ended.promise;
  assert.ok(collector.error instanceof Http2Error);
  assert.equal(client.closed, true);
  assert.equal(client.usable, false);
  server.close();
});

Deno.test("closing the transport resets open streams, the session reports it", async () => {
  let closed: Error | undefined;
  const session = new Http2Session({ write: () => Promise.resolve(), close() {} }, {
    role: "client",
    onClose: (error) => closed = error,
  });
  const collector = new Collector();
  session.request(collector, REQUEST, false);
  session.transportClosed(new Error("reset by peer"));
  await collector.ended.promise;
  assert.equal(collector.error?.message, "reset by peer");
  assert.equal(closed?.message, "reset by peer");
});

Deno.test("a peer that hangs up unheard: the read's error, not the write's, fails the streams", async () => {
  const close = "peer closed connection without sending TLS close_notify";
  for (const readError of [new Error(close), undefined]) {
    const session = new Http2Session({
      write: () => Promise.reject(new Error("Broken pipe (os error 32)")),
      close() {},
    }, { role: "client" });
    const collector = new Collector();
    session.request(collector, REQUEST, true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The failed write alone ends nothing: the read side has the reason.
    assert.equal(collector.error, undefined);
    session.transportClosed(readError);
    await collector.ended.promise;
    assert.match(collector.error!.message, readError ? /close_notify/ : /Broken pipe/);
  }
  // Once the peer has spoken, a failed write fails the session at once.
  const session = new Http2Session({
    write: () => Promise.reject(new Error("Broken pipe (os error 32)")),
    close() {},
  }, { role: "client" });
  session.receive(frame(4, 0, 0));
  const collector = new Collector();
  session.request(collector, REQUEST, true);
  await collector.ended.promise;
  assert.match(collector.error!.message, /Writing to the connection failed: Broken pipe/);
});

function frame(type: number, flags: number, stream: number, payload: number[] = []): Uint8Array {
  const n = payload.length;
  return Uint8Array.from([
    n >> 16,
    (n >> 8) & 255,
    n & 255,
    type,
    flags,
    stream >>> 24,
    (stream >> 16) & 255,
    (stream >> 8) & 255,
    stream & 255,
    ...payload,
  ]);
}

/** DATA frames in captured writes, read as one byte stream (large payloads are written apart). */
function dataFrames(
  writes: Uint8Array[],
): Array<{ stream: number; flags: number; payload: Uint8Array }> {
  const bytes = new Uint8Array(writes.reduce((n, w) => n + w.length, 0));
  let offset = 0;
  for (const w of writes) {
    bytes.set(w, offset);
    offset += w.length;
  }
  const frames = [];
  let pos = bytes[0] === 0x50 ? 24 : 0; // the client preface
  while (pos + 9 <= bytes.length) {
    const length = (bytes[pos] << 16) | (bytes[pos + 1] << 8) | bytes[pos + 2];
    const stream = new DataView(bytes.buffer, pos + 5, 4).getUint32(0);
    const payload = bytes.subarray(pos + 9, pos + 9 + length);
    if (bytes[pos + 3] === 0) frames.push({ stream, flags: bytes[pos + 4], payload });
    pos += 9 + length;
  }
  return frames;
}

/** DATA payload octets per stream in captured writes. */
function dataOctets(writes: Uint8Array[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const { stream, payload } of dataFrames(writes)) {
    out.set(stream, (out.get(stream) ?? 0) + payload.length);
  }
  return out;
}

Deno.test("large DATA: frames of the peer's size within its windows, written from the caller's buffer", async () => {
  const writes: Uint8Array[] = [];
  const views: Uint8Array[] = [];
  const session = new Http2Session({
    write: (bytes) => {
      views.push(bytes);
      writes.push(bytes.slice());
      return Promise.resolve();
    },
    close() {},
  }, { role: "client" });
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
  // Frames up to 100,000 octets, 150,000 octets per stream, 1 MB more for the connection.
  session.receive(frame(4, 0, 0, [0, 5, 0, 1, 0x86, 0xa0, 0, 4, 0, 2, 0x49, 0xf0]));
  session.receive(frame(8, 0, 0, [0, 0x0f, 0x42, 0x40]));
  const stream = session.request(new Collector(), REQUEST, false);
  const body = new Uint8Array(400_000).map((_, i) => i % 251);
  session.sendData(stream, body, true);
  await tick();
  const sizes = () => dataFrames(writes).map((f) => f.payload.length);
  assert.deepEqual(sizes(), [100_000, 50_000]);
  // More credit for the stream: the rest is queued at once (the writes follow one another).
  session.receive(frame(8, 0, 1, [0, 0x03, 0xd0, 0x90]));
  await tick();
  assert.deepEqual(sizes(), [100_000, 50_000, 100_000, 100_000, 50_000]);
  const frames = dataFrames(writes);
  assert.deepEqual(frames.map((f) => f.flags), [0, 0, 0, 0, 1]);
  assert.deepEqual(frames.map((f) => [...f.payload]).flat(), [...body]);
  // Payloads of 64 KiB and more (the three of 100,000) reach the transport as views of `body`.
  assert.equal(views.filter((v) => v.buffer === body.buffer).length, 3);
  session.close();
});

Deno.test("sending waits for the peer's flow-control credit", async () => {
  const writes: Uint8Array[] = [];
  const session = new Http2Session({
    write: (bytes) => {
      writes.push(bytes.slice());
      return Promise.resolve();
    },
    close() {},
  }, { role: "client" });
  // The peer allows 100 octets per stream.
  session.receive(frame(4, 0, 0, [0, 4, 0, 0, 0, 100]));
  const stream = session.request(new Collector(), REQUEST, false);
  session.sendData(stream, new Uint8Array(250), true);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(dataOctets(writes).get(1), 100);
  session.receive(frame(8, 0, 1, [0, 0, 0, 100]));
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(dataOctets(writes).get(1), 200);
  session.receive(frame(8, 0, 1, [0, 0, 1, 0]));
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(dataOctets(writes).get(1), 250);
  session.close();
});

Deno.test("GOAWAY fails streams the server did not take as retryable, keeps the others", async () => {
  const session = new Http2Session({ write: () => Promise.resolve(), close() {} }, {
    role: "client",
  });
  const first = new Collector();
  const second = new Collector();
  session.request(first, REQUEST, false);
  session.request(second, REQUEST, false);
  session.receive(frame(7, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0]));
  await second.ended.promise;
  assert.match(second.error!.message, /before handling the request/);
  assert.equal(first.error, undefined);
  assert.equal(session.usable, false);
  session.close();
});

Deno.test("a stream GOAWAY kept that dies with the connection names the GOAWAY", async () => {
  const session = new Http2Session({ write: () => Promise.resolve(), close() {} }, {
    role: "client",
  });
  const kept = new Collector();
  session.request(kept, REQUEST, false);
  session.receive(frame(7, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0]));
  session.transportClosed();
  await kept.ended.promise;
  assert.equal(kept.error!.message, "The connection was closed by the peer after GOAWAY NO_ERROR");
});
