import assert from "node:assert/strict";
import { type HttpRequest, serveHttp } from "./_http.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Echoes method, path, query, body length and a header; delays when asked, to test ordering. */
async function echo(request: HttpRequest) {
  const delay = Number(request.header("x-delay") ?? 0);
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  const text = `${request.method} ${request.path} ${request.query} ${request.body.byteLength} ${
    request.header("x-tag") ?? "-"
  } ${decoder.decode(request.body.subarray(0, 8))}`;
  return { status: 200, contentType: "text/plain", body: encoder.encode(text) };
}

async function withRaw(fn: (conn: Deno.TcpConn) => Promise<void>) {
  const server = serveHttp(echo, { hostname: "127.0.0.1", port: 0 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  try {
    await fn(conn);
  } finally {
    conn.close();
    await server.close();
  }
}

/** Reads until the peer closes or `count` complete responses (by Content-Length) arrived. */
async function readResponses(conn: Deno.Conn, count: number): Promise<string[]> {
  let text = "";
  const buffer = new Uint8Array(65536);
  const responses: string[] = [];
  for (;;) {
    for (;;) {
      const headEnd = text.indexOf("\r\n\r\n");
      if (headEnd < 0) break;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, headEnd))?.[1] ?? 0);
      if (text.length < headEnd + 4 + length) break;
      responses.push(text.slice(0, headEnd + 4 + length));
      text = text.slice(headEnd + 4 + length);
    }
    if (responses.length >= count) return responses;
    const n = await conn.read(buffer);
    if (n === null) return responses;
    text += decoder.decode(buffer.subarray(0, n));
  }
}

const bodyOf = (response: string) => response.slice(response.indexOf("\r\n\r\n") + 4);

Deno.test("pipelined requests are answered in order, each in one response", async () => {
  await withRaw(async (conn) => {
    await conn.write(encoder.encode(
      "POST /a?x=1 HTTP/1.1\r\nHost: h\r\nX-Delay: 20\r\nContent-Length: 5\r\n\r\nhello" +
        "GET /b HTTP/1.1\r\nHost: h\r\nX-Tag: second\r\n\r\n" +
        "\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n",
    ));
    const responses = await readResponses(conn, 3);
    assert.deepEqual(responses.map(bodyOf), [
      "POST /a x=1 5 - hello",
      "GET /b  0 second ",
      "GET /c  0 - ",
    ]);
    assert.match(responses[0], /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/plain\r\n/);
  });
});

Deno.test("chunked bodies, 100-continue and bodies arriving in pieces", async () => {
  await withRaw(async (conn) => {
    await conn.write(encoder.encode(
      "POST /chunked HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\nTrailer: x\r\n\r\n",
    ));
    assert.equal(bodyOf((await readResponses(conn, 1))[0]), "POST /chunked  7 - abcdefg");

    await conn.write(encoder.encode(
      "POST /big HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n",
    ));
    const interim = await readResponses(conn, 1);
    assert.match(interim[0], /^HTTP\/1\.1 100 Continue\r\n\r\n/);
    const big = new Uint8Array(100000).fill(65);
    await conn.write(big.subarray(0, 30000));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await conn.write(big.subarray(30000));
    assert.equal(bodyOf((await readResponses(conn, 1))[0]), "POST /big  100000 - AAAAAAAA");
  });
});

Deno.test("malformed requests get 400 and the connection closes", async () => {
  await withRaw(async (conn) => {
    await conn.write(encoder.encode("NONSENSE\r\n\r\n"));
    const [response, ...rest] = await readResponses(conn, 2);
    assert.match(response, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(response, /Connection: close\r\n/);
    assert.match(bodyOf(response), /^\{"error":"Malformed request line/);
    assert.deepEqual(rest, []);
  });
});

Deno.test("HTTP/1.0 and Connection: close end the connection after the response", async () => {
  await withRaw(async (conn) => {
    await conn.write(encoder.encode("GET /old HTTP/1.0\r\n\r\nGET /never HTTP/1.1\r\n\r\n"));
    const responses = await readResponses(conn, 2);
    assert.equal(responses.length, 1);
    assert.match(responses[0], /Connection: close\r\n/);
  });
});

Deno.test("close() ends idle keep-alive connections", async () => {
  const server = serveHttp(echo, { hostname: "127.0.0.1", port: 0 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await conn.write(encoder.encode("GET / HTTP/1.1\r\n\r\n"));
  await readResponses(conn, 1);
  await server.close();
  assert.equal(await conn.read(new Uint8Array(16)), null);
  conn.close();
});
