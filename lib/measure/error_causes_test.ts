import assert from "node:assert/strict";
import { errorCause, errorCauses } from "./error_causes.ts";

Deno.test("failure messages group by cause, most frequent first, with an example", () => {
  assert.deepEqual(
    errorCauses([
      ["Server sent an error: Injected mid-stream error", 4],
      ['Connection to "127.0.0.1:8000" closed in the middle of a response', 3],
      ["Server returned 503: busy", 2],
      ["Server returned 503: still busy", 2],
      ["The stream ended without data: [DONE]", 1],
      ["Something new", 1],
    ]),
    [
      { cause: "HTTP 503", count: 4, example: "Server returned 503: busy" },
      {
        cause: "error event in the stream",
        count: 4,
        example: "Server sent an error: Injected mid-stream error",
      },
      {
        cause: "connection closed by the server",
        count: 3,
        example: 'Connection to "127.0.0.1:8000" closed in the middle of a response',
      },
      { cause: "other", count: 1, example: "Something new" },
      {
        cause: "stream ended without [DONE]",
        count: 1,
        example: "The stream ended without data: [DONE]",
      },
    ],
  );
  assert.equal(errorCause("Server returned UNAVAILABLE: no model"), "gRPC UNAVAILABLE");
  assert.equal(errorCause('Request to "h:1" timed out after 50 ms'), "timeout");
  assert.equal(errorCause('Cannot connect to "h:1": connection refused'), "cannot connect");
  assert.equal(errorCause("Invalid JSON from the server: {"), "protocol error");
  assert.equal(
    errorCause("Abandoned: no response from the server for 30000 ms (--stall-timeout)"),
    "abandoned (--stall-timeout)",
  );
  assert.equal(errorCause("Output doesn't match expected output: OUT"), "output mismatch");
});
