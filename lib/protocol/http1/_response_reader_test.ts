import assert from "node:assert/strict";
import { ConnectionError, ProtocolError } from "../errors.ts";
import { type ByteSource, MAX_HEAD_BYTES, ResponseReader } from "./_response_reader.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Serves fixed bytes `step` at a time, then end of stream. */
class StepSource implements ByteSource {
  #data: Uint8Array;
  #step: number;
  #offset = 0;
  reads = 0;

  constructor(data: string | Uint8Array, step: number) {
    this.#data = typeof data === "string" ? encoder.encode(data) : data;
    this.#step = step;
  }

  read(p: Uint8Array): Promise<number | null> {
    if (this.#offset >= this.#data.length) return Promise.resolve(null);
    const n = Math.min(this.#step, p.length, this.#data.length - this.#offset);
    p.set(this.#data.subarray(this.#offset, this.#offset + n));
    this.#offset += n;
    this.reads++;
    return Promise.resolve(n);
  }
}

const STEPS = [1, 2, 3, 7, 64, 1 << 20];

function reader(data: string | Uint8Array, step: number, initialBufferBytes?: number) {
  return new ResponseReader(new StepSource(data, step), "test:1", initialBufferBytes);
}

async function bodyText(r: ResponseReader): Promise<string> {
  return decoder.decode(await r.readBody());
}

Deno.test("content-length response split at every step size", async () => {
  const wire = "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 5\r\ncontent-type: application/json\r\n" +
    "Inference-Header-Content-Length:  3 \r\nX-Other: y\r\n\r\nhello";
  for (const step of STEPS) {
    const r = reader(wire, step);
    const head = await r.readHead();
    assert.equal(head.status, 200);
    assert.equal(head.contentLength, 5);
    assert.equal(head.chunked, false);
    assert.equal(head.keepAlive, true);
    assert.equal(head.contentType, "application/json");
    assert.equal(head.inferenceHeaderContentLength, 3);
    assert.equal(await bodyText(r), "hello");
    assert.equal(r.bodyPending, false);
    await assert.rejects(r.readHead(), ConnectionError);
  }
});

Deno.test("status line without a reason phrase and absent headers", async () => {
  const r = reader("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", 1);
  const head = await r.readHead();
  assert.equal(head.status, 404);
  assert.equal(head.contentType, "");
  assert.equal(head.inferenceHeaderContentLength, -1);
  assert.equal(r.bodyPending, false);
  assert.equal((await r.readBody()).length, 0);
});

const CHUNKED =
  "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nContent-Length: 99\r\n\r\n" +
  '5;name=value;other="x"\r\nhello\r\n' +
  "1\r\n \r\n" +
  "A  ; ext\r\n0123456789\r\n" +
  "0;last\r\nX-Trailer: 1\r\nOther-Trailer: two\r\n\r\n";

Deno.test("chunked body with extensions and trailers, read and skipped", async () => {
  for (const step of STEPS) {
    const r = reader(CHUNKED + CHUNKED, step);
    const head = await r.readHead();
    assert.equal(head.chunked, true);
    assert.equal(head.contentLength, -1);
    assert.equal(await bodyText(r), "hello 0123456789");
    await r.readHead();
    await r.skipBody();
    assert.equal(r.buffered, 0);
    await assert.rejects(r.readHead(), ConnectionError);
  }
});

Deno.test("chunked body larger than the buffer is decoded in place", async () => {
  const body = new Uint8Array(50_000).map((_, i) => (i * 7) % 251);
  const parts: Uint8Array[] = [
    encoder.encode("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"),
  ];
  for (let i = 0; i < body.length; i += 3001) {
    const piece = body.subarray(i, i + 3001);
    parts.push(encoder.encode(`${piece.length.toString(16)}\r\n`), piece, encoder.encode("\r\n"));
  }
  parts.push(encoder.encode("0\r\n\r\n"));
  const wire = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    wire.set(p, at);
    at += p.length;
  }
  for (const step of [1000, 4096, 1 << 20]) {
    const r = reader(wire, step, 1024);
    await r.readHead();
    assert.deepEqual(await r.readBody(), body);
  }
});

Deno.test("pipelined responses in one read", async () => {
  const wire = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none" +
    'HTTP/1.1 500 Internal Server Error\r\ncontent-length: 18\r\n\r\n{"error":"broken"}' +
    "HTTP/1.1 204 No Content\r\n\r\n" +
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n" +
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nthree";
  const source = new StepSource(wire, 1 << 20);
  const r = new ResponseReader(source, "test:1");
  assert.equal((await r.readHead()).status, 200);
  assert.equal(await bodyText(r), "one");
  assert.ok(r.buffered > 0);
  assert.equal((await r.readHead()).status, 500);
  assert.equal(await bodyText(r), '{"error":"broken"}');
  assert.equal((await r.readHead()).status, 204);
  await r.skipBody();
  await r.readHead();
  await r.skipBody();
  await r.readHead();
  assert.equal(await bodyText(r), "three");
  assert.equal(source.reads, 1);
});

Deno.test("skipping a large body reuses the buffer", async () => {
  const wire = `HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n${"x".repeat(100000)}` +
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  for (const step of [1, 999, 1 << 20]) {
    const r = reader(wire, step, 1024);
    await r.readHead();
    await r.skipBody();
    await r.readHead();
    assert.equal(await bodyText(r), "ok");
  }
});

Deno.test("a content-length body larger than the buffer grows it", async () => {
  const wire = `HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n${"y".repeat(5000)}`;
  for (const step of [1, 333, 1 << 20]) {
    const r = reader(wire, step, 1024);
    await r.readHead();
    assert.equal(await bodyText(r), "y".repeat(5000));
  }
});

Deno.test("connection close and HTTP/1.0 keep-alive rules", async () => {
  const cases: [string, boolean][] = [
    ["HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false],
    ["HTTP/1.1 200 OK\r\nConnection: upgrade, Close\r\nContent-Length: 0\r\n\r\n", false],
    ["HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false],
    ["HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", true],
    ["HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true],
  ];
  for (const [wire, keepAlive] of cases) {
    assert.equal((await reader(wire, 5).readHead()).keepAlive, keepAlive, wire);
  }
});

Deno.test("a body without length runs until the connection closes", async () => {
  for (const step of [1, 1 << 20]) {
    const r = reader("HTTP/1.1 200 OK\r\n\r\nuntil the end", step);
    const head = await r.readHead();
    assert.equal(head.keepAlive, false);
    assert.equal(await bodyText(r), "until the end");
    const skipped = reader("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc", step);
    await skipped.readHead();
    await skipped.skipBody();
    assert.equal(skipped.bodyPending, false);
  }
});

Deno.test("interim 1xx responses are skipped", async () => {
  const r = reader(
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n" +
      "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
    4,
  );
  assert.equal((await r.readHead()).status, 201);
  assert.equal(await bodyText(r), "ok");
});

Deno.test("premature end of stream is a ConnectionError", async () => {
  const idle = reader("", 1);
  await assert.rejects(idle.readHead(), /closed before a response arrived/);
  assert.equal(idle.responseStarted, false);

  const inHead = reader("HTTP/1.1 200 OK\r\nContent-Le", 3);
  await assert.rejects(inHead.readHead(), (e) => {
    assert.ok(e instanceof ConnectionError);
    assert.match(e.message, /"test:1" closed in the middle of a response/);
    return true;
  });
  assert.equal(inHead.responseStarted, true);

  const inBody = reader("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 3);
  await inBody.readHead();
  await assert.rejects(inBody.readBody(), ConnectionError);

  const inSkip = reader("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 3);
  await inSkip.readHead();
  await assert.rejects(inSkip.skipBody(), ConnectionError);

  const inChunks = reader("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 1);
  await inChunks.readHead();
  await assert.rejects(inChunks.readBody(), ConnectionError);
});

Deno.test("malformed responses are ProtocolErrors", async () => {
  const heads = [
    "HTTP/2 200 OK\r\n\r\n",
    "HTTP/1.1 20 OK\r\n\r\n",
    "HTTP/1.1 abc OK\r\n\r\n",
    "HTTP/1.1 200OK\r\n\r\n",
    "SSH-2.0-OpenSSH\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: -1\r\n\r\n",
    "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  ];
  for (const wire of heads) {
    await assert.rejects(reader(wire, 4).readHead(), ProtocolError, wire);
  }
  await assert.rejects(reader("HTTP/1.1 200 OK\r\n", 1).readHead(), ConnectionError);
  await assert.rejects(
    reader("HTTTP/1.1 200 OK\r\n\r\n", 4).readHead(),
    /Malformed status line "HTTTP\/1.1 200 OK"/,
  );

  const bodies = [
    "zz\r\nab\r\n0\r\n\r\n",
    "\r\n",
    "2\r\nabXY0\r\n\r\n",
    `${"1".repeat(20)}\r\n`,
  ];
  for (const chunks of bodies) {
    const r = reader(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`, 3);
    await r.readHead();
    await assert.rejects(r.readBody(), ProtocolError, chunks);
  }
});

Deno.test("an oversized head is refused", async () => {
  const wire = `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(MAX_HEAD_BYTES)}\r\n\r\n`;
  await assert.rejects(reader(wire, 1 << 20).readHead(), /Response head exceeds/);
});

Deno.test("readHead refuses to start before the body is consumed", async () => {
  const r = reader("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 100);
  await r.readHead();
  await assert.rejects(r.readHead(), TypeError);
});

Deno.test("the content type string is reused while the bytes repeat", async () => {
  const one = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n";
  const r = reader(one + one + one.replace("plain", "html!"), 1 << 20);
  const first = (await r.readHead()).contentType;
  assert.equal(first, "text/plain");
  assert.equal((await r.readHead()).contentType, first);
  assert.equal((await r.readHead()).contentType, "text/html!");
});

Deno.test("streamBody hands over the data of every framing as it arrives", async () => {
  const cases: Array<[string, string]> = [
    [CHUNKED, "hello 0123456789"],
    ["HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello worldHTTP/1.1", "hello world"],
    ["HTTP/1.1 200 OK\r\n\r\nuntil the end", "until the end"],
  ];
  for (const [wire, body] of cases) {
    for (const step of STEPS) {
      const r = reader(wire, step);
      await r.readHead();
      const pieces: string[] = [];
      await r.streamBody((data) => pieces.push(decoder.decode(data)));
      assert.equal(pieces.join(""), body, `step ${step}`);
      assert.equal(r.bodyPending, false);
      if (step === 1) assert.ok(pieces.length >= body.length, "one piece per read");
    }
  }
});

Deno.test("streamBody leaves a pipelined response intact and stops when onData throws", async () => {
  const r = reader(CHUNKED + CHUNKED, 3);
  await r.readHead();
  await r.streamBody(() => {});
  await r.readHead();
  assert.equal(await bodyText(r), "hello 0123456789");
  const failing = reader(CHUNKED, 4);
  await failing.readHead();
  await assert.rejects(
    failing.streamBody(() => {
      throw new ProtocolError("bad event");
    }),
    /bad event/,
  );
});

Deno.test("the head ends at its first CRLFCRLF whatever CR and LF bytes come before it", async () => {
  // Values with stray CR and LF bytes at every alignment, so the skipping search meets each case.
  for (let pad = 0; pad < 8; pad++) {
    for (const tricky of ["\r", "\r\r", "\n", "\n\r", "\n\n\r", "x\r", "x\r\r\r"]) {
      const wire = `HTTP/1.1 200 OK\r\nX-Pad: ${"p".repeat(pad)}${tricky}\r\n` +
        `Content-Length: 3\r\n\r\nabc`;
      for (const step of STEPS) {
        const r = reader(wire, step);
        assert.equal((await r.readHead()).contentLength, 3, `pad ${pad}, step ${step}`);
        assert.equal(await bodyText(r), "abc");
      }
    }
  }
});

Deno.test("skipBufferedBody consumes a body that has fully arrived, and only then", async () => {
  const wire = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 204 No Content\r\n\r\n";
  const whole = reader(wire, 1 << 20);
  await whole.readHead();
  assert.equal(whole.skipBufferedBody(), true);
  assert.equal(whole.bodyPending, false);
  assert.equal((await whole.readHead()).status, 204);
  assert.equal(whole.skipBufferedBody(), true);

  const split = reader(wire, 40);
  await split.readHead();
  assert.equal(split.skipBufferedBody(), false);
  assert.equal(split.bodyPending, true);
  await split.skipBody();
  assert.equal((await split.readHead()).status, 204);

  const chunked = reader(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    1 << 20,
  );
  await chunked.readHead();
  assert.equal(chunked.skipBufferedBody(), false);
  await chunked.skipBody();
  assert.equal(chunked.bodyPending, false);
});

Deno.test("a head equal to the last one gives the same fields; one that differs anywhere is parsed", async () => {
  const same = "HTTP/1.1 200 OK\r\nDate: Fri, 27 Nov 2026 18:00:00 GMT\r\nContent-Length: 3\r\n" +
    "Inference-Header-Content-Length: 2\r\n\r\nabc";
  const wires = [
    same,
    same,
    // The same length, another content-length and status: not the last head.
    same.replace("Content-Length: 3", "Content-Length: 4").replace("abc", "abcd"),
    same.replace("200 OK", "503 No"),
    // Another date (a second later) shifts nothing but is not equal either.
    same.replace("18:00:00", "18:00:01"),
    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz",
  ];
  const expected = [
    [200, 3, true, "abc"],
    [200, 3, true, "abc"],
    [200, 4, true, "abcd"],
    [503, 3, true, "abc"],
    [200, 3, true, "abc"],
    [200, 1, false, "z"],
  ];
  // Pipelined in one stream, so heads start at every alignment of the buffer; and one read at a time.
  for (const step of [...STEPS, 5, 11]) {
    const r = reader(wires.join(""), step);
    for (const [status, length, keepAlive, body] of expected) {
      const head = await r.readHead();
      assert.deepEqual([head.status, head.contentLength, head.keepAlive], [
        status,
        length,
        keepAlive,
      ]);
      assert.equal(head.inferenceHeaderContentLength, keepAlive ? 2 : -1);
      assert.equal(await bodyText(r), body);
    }
  }
});
