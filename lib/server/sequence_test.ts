import assert from "node:assert/strict";
import type { Tensor } from "../types/tensor.ts";
import { resolveModelSpecs } from "./config.ts";
import { type Clock, type SequenceFlags, SimulatedModel } from "./model.ts";

/** Compute takes no time here, so no timer is ever set; tests move the time by hand. */
class ManualClock implements Clock {
  time = 0;
  now(): number {
    return this.time;
  }
  setTimer(): () => void {
    throw new Error("No timer expected");
  }
}

function accumulator(
  clock: Clock,
  options: { idleMs?: number; stringIds?: boolean } = {},
): SimulatedModel {
  const [spec] = resolveModelSpecs([{
    name: "acc",
    kind: "accumulate",
    sequence_batching: {
      max_sequence_idle_ms: options.idleMs ?? 1000,
      string_ids: options.stringIds ?? false,
    },
    inputs: [{ name: "INPUT", datatype: "INT32", dims: [2] }],
    outputs: [{ name: "OUTPUT", datatype: "INT32", dims: [2] }],
  }], "test");
  return new SimulatedModel(spec, "1", { clock });
}

function int32(values: number[]): Tensor {
  return {
    name: "INPUT",
    datatype: "INT32",
    shape: [values.length],
    data: new Uint8Array(new Int32Array(values).buffer),
  };
}

async function send(model: SimulatedModel, values: number[], sequence?: SequenceFlags) {
  const [out] = await model.infer({
    id: "",
    inputs: [int32(values)],
    outputs: [],
    arrival: 0,
    ...(sequence ? { sequence } : {}),
  });
  return [...new Int32Array(out.data.slice().buffer)];
}

const step = (id: number | string, start = false, end = false) => ({ id, start, end });

Deno.test("an accumulator sums each sequence separately", async () => {
  const model = accumulator(new ManualClock(), { stringIds: true });
  assert.deepEqual(await send(model, [1, 2], step(7, true)), [1, 2]);
  assert.deepEqual(await send(model, [5, 5], step("s", true)), [5, 5]);
  assert.deepEqual(await send(model, [1, 2], step(7)), [2, 4]);
  assert.deepEqual(await send(model, [1, 1], step(7, false, true)), [3, 5]);
  assert.deepEqual(await send(model, [1, 1], step("s", false, true)), [6, 6]);
  // After its end the id is free again.
  assert.deepEqual(await send(model, [9, 9], step(7, true, true)), [9, 9]);
});

Deno.test("sequence protocol violations are rejected", async () => {
  const clock = new ManualClock();
  const model = accumulator(clock, { idleMs: 100 });
  await assert.rejects(send(model, [1, 1]), /must specify a non-zero or non-empty correlation ID/);
  // Triton takes string ids only when the model's sequence batcher declares them.
  await assert.rejects(
    send(model, [1, 1], step("s", true)),
    /^ServerError: \[request id: <id_unknown>\] correlation ID in request is not an unsigned int$/,
  );
  await assert.rejects(send(model, [1, 1], step(0, true)), /non-zero or non-empty correlation ID/);
  await assert.rejects(
    send(model, [1, 1], step(3)),
    /sequence 3 to model 'acc' must specify the START flag on the first request/,
  );
  await send(model, [1, 1], step(4, true));
  await assert.rejects(send(model, [1, 1], step(4, true)), /already in progress/);
  clock.time = 150;
  await assert.rejects(
    send(model, [1, 1], step(4)),
    /must specify the START flag/,
    "an idle sequence is released",
  );
  assert.deepEqual(await send(model, [2, 2], step(4, true)), [2, 2]);
  assert.equal(model.stats.fail.count, 6);
});

Deno.test("accumulate needs sequence batching and one matching tensor", () => {
  assert.throws(
    () =>
      resolveModelSpecs([{
        name: "bad",
        kind: "accumulate",
        inputs: [{ name: "A", datatype: "BYTES", dims: [-1] }],
        outputs: [{ name: "B", datatype: "INT32", dims: [2] }],
      }], "test"),
    (e: Error) =>
      /"kind" "accumulate" needs sequence_batching/.test(e.message) &&
      /inputs\[0\].datatype/.test(e.message) && /outputs\[0\]/.test(e.message),
  );
});
