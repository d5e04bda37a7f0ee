import assert from "node:assert/strict";
import type { Tensor } from "../types/tensor.ts";
import { type ModelConfig, resolveModelSpecs } from "./config.ts";
import { type Clock, type CoreRequest, realClock, SimulatedModel } from "./model.ts";
import { ServerError } from "./errors.ts";

/** Timers fire only when the test advances time, so schedules are exact. */
class FakeClock implements Clock {
  time = 0;
  #timers: Array<{ at: number; seq: number; callback: () => void }> = [];
  #seq = 0;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): () => void {
    const timer = { at: this.time + delayMs, seq: this.#seq++, callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Advances to `time`, firing due timers in order and letting promise callbacks run. */
  async advanceTo(time: number): Promise<void> {
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers[0];
      if (next === undefined || next.at > time) break;
      this.#timers.shift();
      this.time = next.at;
      next.callback();
      await Promise.resolve();
    }
    this.time = time;
    await Promise.resolve();
  }
}

function model(config: Partial<ModelConfig>, clock: Clock): SimulatedModel {
  const [spec] = resolveModelSpecs([{
    name: "m",
    kind: "identity",
    inputs: [{ name: "IN", datatype: "FP32", dims: [2] }],
    outputs: [{ name: "OUT", datatype: "FP32", dims: [2] }],
    ...config,
  }], "test");
  return new SimulatedModel(spec, "1", { clock });
}

/** An FP32 tensor of ones. */
function fp32(name: string, shape: number[]): Tensor {
  const count = shape.reduce((a, b) => a * b, 1);
  return {
    name,
    datatype: "FP32",
    shape,
    data: new Uint8Array(new Float32Array(count).fill(1).buffer),
  };
}

function request(
  inputs: Tensor[],
  options: { arrival?: number; outputs?: string[]; id?: string } = {},
): CoreRequest {
  return {
    id: options.id ?? "",
    inputs,
    outputs: options.outputs ?? [],
    arrival: options.arrival ?? 0,
  };
}

const ms = (ns: number) => ns / 1e6;

Deno.test("one instance serves 10 ms requests one after another (queue 0/10/20/30 ms)", async () => {
  const clock = new FakeClock();
  const m = model({ compute_ms: 10 }, clock);
  const done: number[] = [];
  const all = [0, 1, 2, 3].map(() =>
    m.infer(request([fp32("IN", [2])])).then(() => done.push(clock.now()))
  );
  await clock.advanceTo(100);
  await Promise.all(all);
  assert.deepEqual(done, [10, 20, 30, 40]);
  const s = m.stats;
  assert.equal(ms(s.queue.ns), 0 + 10 + 20 + 30);
  assert.equal(ms(s.success.ns), 10 + 20 + 30 + 40);
  assert.equal(ms(s.computeInfer.ns), 40);
  assert.equal(s.success.count, 4);
  assert.equal(s.executionCount, 4);
  assert.equal(s.inferenceCount, 4);
});

Deno.test("two instances halve the queueing and compute phases add up", async () => {
  const clock = new FakeClock();
  const m = model(
    { compute_ms: 10, compute_input_ms: 1, compute_output_ms: 2, instances: 2 },
    clock,
  );
  const done: number[] = [];
  const all = [0, 1, 2, 3].map(() =>
    m.infer(request([fp32("IN", [2])])).then(() => done.push(clock.now()))
  );
  await clock.advanceTo(100);
  await Promise.all(all);
  assert.deepEqual(done, [13, 13, 26, 26]);
  assert.equal(ms(m.stats.queue.ns), 0 + 0 + 13 + 13);
  assert.equal(ms(m.stats.computeInput.ns), 4);
  assert.equal(ms(m.stats.computeOutput.ns), 8);
});

Deno.test("dynamic batching waits up to the queue delay, then runs one execution", async () => {
  const clock = new FakeClock();
  const m = model({
    max_batch_size: 4,
    compute_ms: 10,
    dynamic_batching: { max_queue_delay_ms: 5 },
  }, clock);
  const first = [0, 1, 2].map(() => m.infer(request([fp32("IN", [1, 2])])));
  await clock.advanceTo(4.9);
  assert.equal(m.stats.executionCount, 0);
  await clock.advanceTo(15);
  await Promise.all(first);
  assert.equal(m.stats.executionCount, 1);
  assert.equal(m.stats.inferenceCount, 3);
  assert.equal(ms(m.stats.queue.ns), 15);
  assert.deepEqual([...m.stats.batches.keys()], [3]);

  // A full batch (2 + 2 elements) goes at once; the request that does not fit waits.
  const second = [2, 2, 1].map((b) => m.infer(request([fp32("IN", [b, 2])], { arrival: 15 })));
  await clock.advanceTo(25);
  assert.equal(m.stats.executionCount, 2);
  assert.equal(m.stats.inferenceCount, 7);
  await clock.advanceTo(40);
  await Promise.all(second);
  assert.equal(m.stats.executionCount, 3);
  assert.deepEqual([...m.stats.batches.keys()].sort(), [1, 3, 4]);
});

Deno.test("dynamic batching runs a preferred batch size without waiting", async () => {
  const clock = new FakeClock();
  const m = model({
    max_batch_size: 8,
    compute_ms: 1,
    dynamic_batching: { max_queue_delay_ms: 100, preferred_batch_sizes: [2] },
  }, clock);
  const pending = [0, 1].map(() => m.infer(request([fp32("IN", [1, 2])])));
  await clock.advanceTo(1);
  await Promise.all(pending);
  assert.equal(m.stats.executionCount, 1);
  assert.equal(m.stats.queue.ns, 0);
});

Deno.test("real timers keep the schedule without drift", async () => {
  const m = model({ compute_ms: 5 }, realClock);
  const input = [fp32("IN", [2])];
  // Warm up, so the requests below are enqueued within a fraction of a millisecond.
  await m.infer(request(input));
  const queueBefore = m.stats.queue.ns;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 20 }, () => m.infer(request(input, { arrival: start }))),
  );
  const elapsed = performance.now() - start;
  // Back-to-back executions start at the previous planned end, so timer lateness (about
  // 1 ms each) does not add up to 20 ms.
  assert.ok(elapsed >= 100 && elapsed < 112, `elapsed ${elapsed} ms`);
  const queueMs = ms(m.stats.queue.ns - queueBefore);
  // 5 ms x (0 + 1 + ... + 19).
  assert.ok(Math.abs(queueMs - 950) < 10, `queue ${queueMs} ms`);
  assert.ok(ms(m.stats.success.ns) >= ms(m.stats.queue.ns + m.stats.computeInfer.ns));
});

Deno.test("close fails queued and running requests and stops timers", async () => {
  const m = model({ compute_ms: 1000 }, realClock);
  const pending = [0, 1].map(() => m.infer(request([fp32("IN", [2])])));
  m.close();
  for (const p of pending) {
    await assert.rejects(p, (e: Error) => e instanceof ServerError && e.code === "unavailable");
  }
  await assert.rejects(m.infer(request([fp32("IN", [2])])), ServerError);
});

Deno.test("behaviours compute real outputs", async () => {
  const clock = new FakeClock();
  const [addSub] = resolveModelSpecs([{
    name: "simple",
    kind: "add_sub",
    max_batch_size: 8,
    inputs: [
      { name: "INPUT0", datatype: "INT32", dims: [2] },
      { name: "INPUT1", datatype: "INT32", dims: [2] },
    ],
    outputs: [
      { name: "OUTPUT0", datatype: "INT32", dims: [2] },
      { name: "OUTPUT1", datatype: "INT32", dims: [2] },
    ],
  }], "test");
  const simple = new SimulatedModel(addSub, "1", { clock });
  const int32 = (name: string, values: number[]): Tensor => {
    // At an odd offset: inputs inside a binary request body need not be aligned.
    const raw = new Uint8Array(1 + 4 * values.length);
    raw.set(new Uint8Array(new Int32Array(values).buffer), 1);
    return { name, datatype: "INT32", shape: [1, 2], data: raw.subarray(1) };
  };
  const [sum, diff] = await simple.infer(
    request([int32("INPUT1", [2, 1]), int32("INPUT0", [7, 2147483647])]),
  );
  assert.deepEqual([...new Int32Array(sum.data.slice().buffer)], [9, -2147483648]);
  assert.deepEqual([...new Int32Array(diff.data.slice().buffer)], [5, 2147483646]);
  assert.deepEqual(sum.shape, [1, 2]);
  const [only] = await simple.infer(
    request([int32("INPUT0", [1, 1]), int32("INPUT1", [1, 1])], { outputs: ["OUTPUT1"] }),
  );
  assert.equal(only.name, "OUTPUT1");

  const zeros = model({
    kind: "zeros",
    max_batch_size: 4,
    inputs: [{ name: "IN", datatype: "FP32", dims: [-1, 4] }],
    outputs: [{ name: "OUT", datatype: "INT64", dims: [-1, 3] }],
  }, clock);
  const [z] = await zeros.infer(request([fp32("IN", [2, 5, 4])]));
  assert.deepEqual(z.shape, [2, 5, 3]);
  assert.equal(z.data.byteLength, 2 * 5 * 3 * 8);
  assert.ok(z.data.every((b) => b === 0));
});

Deno.test("invalid requests fail with Triton's messages and count as failures", async () => {
  const clock = new FakeClock();
  const [spec] = resolveModelSpecs([{
    name: "simple",
    kind: "add_sub",
    max_batch_size: 8,
    inputs: [
      { name: "INPUT0", datatype: "INT32", dims: [16] },
      { name: "INPUT1", datatype: "INT32", dims: [16] },
    ],
    outputs: [
      { name: "OUTPUT0", datatype: "INT32", dims: [16] },
      { name: "OUTPUT1", datatype: "INT32", dims: [16] },
    ],
  }], "test");
  const m = new SimulatedModel(spec, "1", { clock });
  const int32 = (name: string, shape: number[]): Tensor => ({
    name,
    datatype: "INT32",
    shape,
    data: new Uint8Array(4 * shape.reduce((a, b) => a * b, 1)),
  });
  const cases: Array<[CoreRequest, string]> = [
    [
      request([int32("INPUT0", [1, 16]), int32("INPUT2", [1, 16])]),
      "unexpected inference input 'INPUT2' for model 'simple'",
    ],
    [
      request([int32("INPUT1", [1, 16])]),
      "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got " +
      "input(s) ['INPUT1'], but missing required input(s) ['INPUT0']. Please provide all " +
      "required input(s).",
    ],
    [
      request([fp32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])]),
      "[request id: <id_unknown>] inference input 'INPUT0' data-type is 'FP32', but model " +
      "'simple' expects 'INT32'",
    ],
    [
      request([int32("INPUT0", [9, 16]), int32("INPUT1", [9, 16])]),
      "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'",
    ],
    [
      request([int32("INPUT0", [1, 15]), int32("INPUT1", [1, 15])]),
      "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. " +
      "Expected [-1,16], got [1,15]. ",
    ],
    [
      request([
        { ...int32("INPUT0", [1, 16]), data: new Uint8Array(60) },
        int32("INPUT1", [1, 16]),
      ]),
      "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model " +
      "'simple'. Expected 64, got 60",
    ],
    [
      request([int32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])], { outputs: ["OUTPUT9"] }),
      "unexpected inference output 'OUTPUT9' for model 'simple'",
    ],
    [
      request([int32("INPUT0", [2, 16]), int32("INPUT1", [1, 16])], { id: "42" }),
      "[request id: 42] input 'INPUT1' batch size does not match other inputs for 'simple'",
    ],
  ];
  for (const [req, message] of cases) {
    await assert.rejects(
      m.infer(req),
      (e: Error) =>
        e instanceof ServerError && e.code === "invalid_argument" && e.message === message,
      message,
    );
  }
  assert.equal(m.stats.fail.count, cases.length);
  assert.equal(m.stats.success.count, 0);
});
