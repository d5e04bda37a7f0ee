import assert from "node:assert/strict";
import { settledOrStalled, watchStall } from "./stall.ts";

Deno.test("settledOrStalled: false when the promise settles first", async () => {
  const stalled = await settledOrStalled(Promise.resolve(), {
    lastMs: () => -Infinity,
    stallMs: 50,
  });
  assert.equal(stalled, false);
});

Deno.test("settledOrStalled: true once nothing completed for the timeout, counted from the last completion", async () => {
  let last = performance.now();
  const bump = setInterval(() => last = performance.now(), 10);
  setTimeout(() => clearInterval(bump), 100);
  const started = performance.now();
  const stalled = await settledOrStalled(new Promise(() => {}), {
    lastMs: () => last,
    stallMs: 60,
  });
  assert.equal(stalled, true);
  assert.ok(performance.now() - started >= 150, "completions until 100 ms put the stall off");
});

Deno.test("watchStall: 0 never stalls; a cancelled watch leaves no timer", async () => {
  const never = watchStall(() => -Infinity, 0);
  const first = await Promise.race([never.stalled.then(() => "stalled"), Promise.resolve("not")]);
  assert.equal(first, "not");
  never.cancel();
  const watch = watchStall(() => -Infinity, 10_000);
  watch.cancel();
});
