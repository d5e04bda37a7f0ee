import assert from "node:assert/strict";
import { buildRequest } from "./request.ts";

const decoder = new TextDecoder();

Deno.test("buildRequest writes head and body in one buffer", () => {
  const body = new TextEncoder().encode("{}");
  const bytes = buildRequest("POST", "/v2/models/m/infer", {
    host: "h:1",
    headers: { "X-A": "1", "Content-Type": "application/json" },
    body,
  });
  assert.equal(
    decoder.decode(bytes),
    "POST /v2/models/m/infer HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\nContent-Type: application/json\r\n" +
      "Content-Length: 2\r\n\r\n{}",
  );
  assert.equal(
    decoder.decode(buildRequest("GET", "/v2", { host: "h:1" })),
    "GET /v2 HTTP/1.1\r\nHost: h:1\r\n\r\n",
  );
  assert.equal(
    decoder.decode(buildRequest("POST", "/x", { host: "h:1", headers: { host: "proxy" } })),
    "POST /x HTTP/1.1\r\nhost: proxy\r\nContent-Length: 0\r\n\r\n",
  );
});

Deno.test("buildRequest refuses header injection and framing headers", () => {
  const host = "h:1";
  assert.throws(
    () => buildRequest("GET", "/", { host, headers: { "X": "a\r\nEvil: 1" } }),
    TypeError,
  );
  assert.throws(() => buildRequest("GET", "/", { host, headers: { "Bad Name": "a" } }), TypeError);
  assert.throws(
    () => buildRequest("GET", "/", { host, headers: { "content-length": "1" } }),
    /set by the client/,
  );
  assert.throws(
    () => buildRequest("GET", "/", { host, headers: { "Transfer-Encoding": "x" } }),
    TypeError,
  );
  assert.throws(() => buildRequest("G T", "/", { host }), /Invalid HTTP method/);
  assert.throws(() => buildRequest("GET", "no-slash", { host }), /Invalid request path/);
  assert.throws(() => buildRequest("GET", "/a b", { host }), /Invalid request path/);
});
