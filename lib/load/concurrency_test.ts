import assert from "node:assert/strict";
import { CONNECTION_BACKOFF_MS, connectionBackoffMs } from "./concurrency.ts";

Deno.test("connection failures in a row back off exponentially, up to a bound", () => {
  assert.deepEqual([1, 2, 3, 4].map(connectionBackoffMs), [50, 100, 200, 400]);
  assert.equal(connectionBackoffMs(5), CONNECTION_BACKOFF_MS.max);
  assert.equal(connectionBackoffMs(1000), CONNECTION_BACKOFF_MS.max);
});
