import assert from "node:assert/strict";
import { ConnectionError, ProtocolError, TimeoutError } from "../errors.ts";
import { buildRequest, connectTls, type Endpoint, Http1Client, Http1Connection } from "./mod.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HOST = "127.0.0.1";

/** A raw TCP server whose handler owns each accepted connection (closed after it returns). */
function rawServer(handler: (conn: Deno.Conn, index: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: HOST, port: 0 });
  const tasks: Promise<void>[] = [];
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      const task = handler(conn, accepted++).catch(() => undefined).finally(() => {
        try {
          conn.close();
        } catch {
          // The handler closed it already.
        }
      });
      tasks.push(task);
    }
  })();
  return {
    port: listener.addr.port,
    get accepted() {
      return accepted;
    },
    async close() {
      listener.close();
      await loop;
      await Promise.all(tasks);
    },
  };
}

/** Reads one request (head plus content-length body); null at end of stream. */
async function readRequest(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(65536);
  let text = "";
  for (;;) {
    const headEnd = text.indexOf("\r\n\r\n");
    if (headEnd !== -1) {
      const length = Number(/content-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length >= headEnd + 4 + length) return text;
    }
    const n = await conn.read(buf);
    if (n === null) return null;
    text += decoder.decode(buf.subarray(0, n));
  }
}

function reply(body: string, extra = ""): Uint8Array {
  return encoder.encode(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`);
}

function endpoint(port: number, options: Partial<Endpoint> = {}): Endpoint {
  return { hostname: HOST, port, ...options };
}

function get(path: string, port: number): Uint8Array {
  return buildRequest("GET", path, { host: `${HOST}:${port}` });
}

Deno.test("keep-alive exchanges against Deno.serve", async () => {
  let requests = 0;
  const server = Deno.serve({ hostname: HOST, port: 0, onListen() {} }, async (req) => {
    requests++;
    const body = new Uint8Array(await req.arrayBuffer());
    if (req.url.endsWith("/chunked")) {
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(encoder.encode("part one, "));
          c.enqueue(encoder.encode("part two"));
          c.close();
        },
      });
      return new Response(stream);
    }
    return new Response(body.length > 0 ? body : "empty", {
      headers: { "content-type": "text/plain", "inference-header-content-length": "7" },
    });
  });
  const port = server.addr.port;
  const conn = await Http1Connection.open(endpoint(port));
  try {
    const post = buildRequest("POST", "/echo", {
      host: `${HOST}:${port}`,
      headers: { "X-Test": "1" },
      body: encoder.encode("payload bytes"),
    });
    const timing = { sendEnd: 0, recvStart: 0 };
    for (let i = 0; i < 50; i++) {
      const before = performance.now();
      const head = await conn.send(post, timing);
      assert.equal(head.status, 200);
      assert.equal(head.contentType, "text/plain");
      assert.equal(head.inferenceHeaderContentLength, 7);
      assert.ok(timing.sendEnd >= before && timing.recvStart >= timing.sendEnd);
      if (i % 2 === 0) assert.equal(decoder.decode(await conn.readBody()), "payload bytes");
      else await conn.skipBody();
    }
    const head = await conn.send(get("/chunked", port));
    assert.equal(head.chunked, true);
    assert.equal(decoder.decode(await conn.readBody()), "part one, part two");
    await conn.send(get("/chunked", port));
    await conn.skipBody();
    await conn.send(get("/", port));
    assert.equal(decoder.decode(await conn.readBody()), "empty");
    assert.equal(requests, 53);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("a second send before the body is consumed is refused", async () => {
  const server = rawServer(async (conn) => {
    while (await readRequest(conn) !== null) await conn.write(reply("ok"));
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  try {
    await conn.send(get("/", server.port));
    await assert.rejects(conn.send(get("/", server.port)), TypeError);
    await conn.skipBody();
    await conn.send(get("/", server.port));
    await conn.skipBody();
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("a keep-alive connection closed while idle is reopened once", async () => {
  const server = rawServer(async (conn) => {
    if (await readRequest(conn) === null) return;
    await conn.write(reply("hello"));
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  try {
    for (let i = 0; i < 5; i++) {
      await conn.send(get("/", server.port));
      assert.equal(decoder.decode(await conn.readBody()), "hello");
      // Let the server's close arrive so the next request meets a dead stream.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(server.accepted, 5);
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("connection: close makes the next request use a new connection", async () => {
  const server = rawServer(async (conn) => {
    if (await readRequest(conn) === null) return;
    await conn.write(reply("bye", "Connection: close\r\n"));
    await readRequest(conn);
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  try {
    for (let i = 0; i < 3; i++) {
      const head = await conn.send(get("/", server.port));
      assert.equal(head.keepAlive, false);
      await conn.skipBody();
      assert.equal(conn.connected, false);
    }
    assert.equal(server.accepted, 3);
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("a connection dropped mid-response is a ConnectionError and not retried", async () => {
  const server = rawServer(async (conn, index) => {
    if (await readRequest(conn) === null) return;
    await conn.write(reply("first"));
    if (await readRequest(conn) === null) return;
    const partial = index === 0 ? "HTTP/1.1 200 OK\r\nContent-Le" : "HTTP/1.1 200 OK\r\n" +
      "Content-Length: 100\r\n\r\nonly part";
    await conn.write(encoder.encode(partial));
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  try {
    await conn.send(get("/", server.port));
    await conn.skipBody();
    await assert.rejects(conn.send(get("/", server.port)), (e) => {
      assert.ok(e instanceof ConnectionError);
      assert.match(e.message, /closed in the middle of a response/);
      return true;
    });
    assert.equal(server.accepted, 1);
    await conn.send(get("/", server.port));
    await conn.readBody();
    await conn.send(get("/", server.port));
    await assert.rejects(conn.readBody(), ConnectionError);
    assert.equal(server.accepted, 2);
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("a malformed response is a ProtocolError and the connection is replaced", async () => {
  const server = rawServer(async (conn, index) => {
    if (await readRequest(conn) === null) return;
    await conn.write(index === 0 ? encoder.encode("garbage\r\n\r\n") : reply("fine"));
    await readRequest(conn);
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  try {
    await assert.rejects(conn.send(get("/", server.port)), ProtocolError);
    await conn.send(get("/", server.port));
    assert.equal(decoder.decode(await conn.readBody()), "fine");
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("refused connections name the address", async () => {
  const listener = Deno.listen({ hostname: HOST, port: 0 });
  const port = listener.addr.port;
  listener.close();
  await assert.rejects(Http1Connection.open(endpoint(port)), (e) => {
    assert.ok(e instanceof ConnectionError);
    assert.equal(e.message, `Cannot connect to "${HOST}:${port}": connection refused`);
    assert.equal(e.address, `${HOST}:${port}`);
    return true;
  });
});

Deno.test("the request timeout fails the exchange and the next one reconnects", async () => {
  const server = rawServer(async (conn, index) => {
    if (await readRequest(conn) === null) return;
    if (index === 0) {
      await readRequest(conn);
      return;
    }
    await conn.write(reply("late enough"));
    await readRequest(conn);
  });
  const conn = await Http1Connection.open(endpoint(server.port, { requestTimeoutMs: 100 }));
  try {
    await assert.rejects(conn.send(get("/", server.port)), (e) => {
      assert.ok(e instanceof TimeoutError);
      assert.equal(e.message, `Request to "${HOST}:${server.port}" timed out after 100 ms`);
      assert.equal(e.timeoutMs, 100);
      return true;
    });
    await conn.send(get("/", server.port));
    assert.equal(decoder.decode(await conn.readBody()), "late enough");
  } finally {
    conn.close();
    await server.close();
  }
});

Deno.test("closing a connection fails the exchange in flight", async () => {
  const server = rawServer(async (conn) => {
    await readRequest(conn);
    await readRequest(conn);
  });
  const conn = await Http1Connection.open(endpoint(server.port));
  const pending = conn.send(get("/", server.port));
  await new Promise((resolve) => setTimeout(resolve, 20));
  conn.close();
  await assert.rejects(pending, /is closed/);
  await assert.rejects(conn.send(get("/", server.port)), ConnectionError);
  await server.close();
});

const testdata = new URL("./testdata/", import.meta.url);
const caCert = Deno.readTextFileSync(new URL("ca.pem", testdata));
const serverCert = Deno.readTextFileSync(new URL("localhost.pem", testdata));
const serverKey = Deno.readTextFileSync(new URL("localhost.key", testdata));

Deno.test("TLS connections verify the server against the given CA", async () => {
  const server = Deno.serve(
    { hostname: HOST, port: 0, cert: serverCert, key: serverKey, onListen() {} },
    () => new Response("secure"),
  );
  const port = server.addr.port;
  const client = new Http1Client({ hostname: "localhost", port, tls: { caCerts: [caCert] } });
  try {
    const response = await client.request("GET", "/");
    assert.equal(response.status, 200);
    assert.equal(decoder.decode(response.body), "secure");
    await assert.rejects(
      Http1Connection.open({ hostname: "localhost", port, tls: {} }),
      (e) => {
        assert.ok(e instanceof ConnectionError);
        assert.match(e.message, /^Cannot connect to "localhost:\d+": TLS handshake failed: /);
        return true;
      },
    );
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("the connect timeout covers a TLS handshake that never answers", async () => {
  const server = rawServer(async (conn) => {
    await conn.read(new Uint8Array(4096));
    // Deno keeps a TLS socket open while its handshake is pending, so this end hangs up.
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
  await assert.rejects(
    connectTls(endpoint(server.port, { tls: { caCerts: [caCert] }, connectTimeoutMs: 100 })),
    (e) => {
      assert.ok(e instanceof TimeoutError);
      assert.equal(e.message, `Cannot connect to "${HOST}:${server.port}": timed out after 100 ms`);
      return true;
    },
  );
  await server.close();
});

Deno.test("Http1Client serializes control requests on one connection", async () => {
  const seen: string[] = [];
  const server = rawServer(async (conn) => {
    for (;;) {
      const request = await readRequest(conn);
      if (request === null) return;
      seen.push(request);
      const line = request.slice(0, request.indexOf("\r\n"));
      await conn.write(reply(line));
    }
  });
  const client = new Http1Client(endpoint(server.port));
  try {
    const responses = await Promise.all([
      client.request("GET", "/v2"),
      client.request("POST", "/v2/x", { body: encoder.encode("{}"), headers: { A: "b" } }),
      client.request("GET", "/v2/models/m/stats"),
    ]);
    assert.deepEqual(responses.map((r) => decoder.decode(r.body)), [
      "GET /v2 HTTP/1.1",
      "POST /v2/x HTTP/1.1",
      "GET /v2/models/m/stats HTTP/1.1",
    ]);
    assert.equal(server.accepted, 1);
    assert.match(seen[1], /^POST \/v2\/x HTTP\/1.1\r\nHost: 127.0.0.1:\d+\r\nA: b\r\n/);
    assert.match(seen[1], /Content-Length: 2\r\n\r\n\{\}$/);
  } finally {
    client.close();
    await server.close();
  }
  await assert.rejects(client.request("GET", "/"), /is closed/);
});
