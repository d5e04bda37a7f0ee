import assert from "node:assert/strict";
import type { RequestTiming } from "../types/timing.ts";
import { Recorder } from "./recorder.ts";

function timing(start: number, end: number): RequestTiming {
  return { start, sendEnd: start, recvStart: end, end, responses: 1 };
}

Deno.test("a window gets its own exact samples when it ends; the next one starts empty", () => {
  const recorder = new Recorder();
  recorder.recordSend(10, 10.25, false);
  recorder.record(timing(10.25, 11), 10);
  recorder.recordSend(12, 12.5, true);
  recorder.record(timing(12.5, 15.125), 12);
  assert.equal(recorder.count, 2);
  const first = recorder.rotate();
  assert.equal(recorder.count, 0);
  recorder.record(timing(20, 21));
  const second = recorder.rotate();
  assert.ok(first.latenciesUs instanceof Float64Array, "samples are kept off the JS heap");
  assert.deepEqual([...first.latenciesUs], [750, 2625]);
  assert.deepEqual([...first.correctedLatenciesUs], [1000, 3125]);
  assert.deepEqual([...first.sendLagsUs], [250, 500]);
  assert.equal(first.blockedCount, 1);
  assert.deepEqual([...second.latenciesUs], [1000], "a later window does not overwrite them");
  assert.deepEqual([...second.correctedLatenciesUs, ...second.sendLagsUs], []);
});
