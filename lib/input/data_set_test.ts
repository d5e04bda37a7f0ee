import assert from "node:assert/strict";
import type { Tensor } from "../types/tensor.ts";
import { batchSteps, type DataStep, makeBatch, sizedTensor } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { fitsDims, resolveShape } from "./shape.ts";

function step(value: number, where: string, shape = [2]): DataStep {
  const data = new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(value);
  const tensor: Tensor = { name: "IN", datatype: "UINT8", shape, data };
  return { inputs: [tensor], outputs: [{ ...tensor, name: "OUT" }], where };
}

Deno.test("-b N takes N consecutive steps, wrapping, in perf_analyzer's request order", () => {
  const steps = [step(0, "s0"), step(1, "s1"), step(2, "s2")];
  const batches = batchSteps(steps, { batchSize: 2, batched: true });
  assert.deepEqual(batches.map((b) => b.steps.map((s) => s.where)), [
    ["s0", "s1"],
    ["s2", "s0"],
    ["s1", "s2"],
  ]);
  assert.deepEqual(batches[1].inputs[0].shape, [2, 2]);
  assert.deepEqual([...batches[1].inputs[0].data], [2, 2, 0, 0]);
  assert.deepEqual([...batches[1].outputs[0].data], [2, 2, 0, 0]);
  assert.equal(batchSteps(steps.slice(0, 2), { batchSize: 4, batched: true }).length, 1);
  assert.equal(batchSteps(steps, { batchSize: 3, batched: true }).length, 1);
});

Deno.test("a single step is repeated for -b N; batch 1 reuses its buffer", () => {
  const only = step(7, "only");
  const [repeated] = batchSteps([only], { batchSize: 3, batched: true });
  assert.deepEqual([...repeated.inputs[0].data], [7, 7, 7, 7, 7, 7]);
  const [single] = batchSteps([only], { batchSize: 1, batched: false });
  assert.equal(single.inputs[0].data, only.inputs[0].data);
  assert.deepEqual(single.inputs[0].shape, [2]);
});

Deno.test("steps of different shapes do not batch; outputs only when every step has them", () => {
  assert.throws(
    () => makeBatch([step(0, "a"), step(1, "b", [3])], { batched: true }),
    (e) =>
      e instanceof InputError &&
      e.message === "can not batch tensors with different shapes together (input 'IN' " +
          "expected shape [2] and received [3]): a has [2] and b has [3]",
  );
  const bare = { ...step(1, "b"), outputs: [] };
  assert.deepEqual(makeBatch([step(0, "a"), bare], { batched: true }).outputs, []);
});

Deno.test("a batch of steps that differ in the optional inputs they give is refused", () => {
  const both = step(0, "a");
  both.inputs.push({ ...both.inputs[0], name: "OPT" });
  const one = step(1, "b");
  assert.equal(makeBatch([one, step(2, "c")], { batched: true }).inputs.length, 1);
  assert.throws(
    () => makeBatch([both, one], { batched: true }),
    (e) =>
      e instanceof InputError &&
      e.message === "For batch sizes larger than 1, the same set of inputs must be specified " +
          "for each batch. You cannot use different set of optional inputs for each individual " +
          "batch. In one batch of 2, a gives IN, OPT and b gives IN",
  );
});

Deno.test("shapes: data, then --shape, then the model, then one variable dim from the size", () => {
  const spec = { name: "X", datatype: "FP32" as const, dims: [-1, 3] };
  assert.deepEqual(resolveShape(spec, { given: [2, 3] }), { shape: [2, 3], source: "the data" });
  assert.deepEqual(resolveShape(spec, { given: [4, 3], option: [4, 3] }).source, "the data");
  assert.deepEqual(resolveShape(spec, { option: [4, 3], elements: 6 }).shape, [4, 3]);
  assert.deepEqual(resolveShape(spec, { elements: 9 }), { shape: [3, 3], source: "the data size" });
  assert.throws(
    () => resolveShape(spec, { elements: 10 }),
    /needs to have its shape fully defined/,
  );
  assert.throws(() => resolveShape(spec, {}), /See the --shape option\.$/);
  assert.throws(
    () => resolveShape(spec, { option: [4, 4] }),
    (e) =>
      e instanceof InputError &&
      e.message === 'The supplied shape of [4,4] for input "X" is incompatible with the ' +
          "model's input shape of [-1,3] (given with --shape)",
  );
  assert.ok(fitsDims([5, 3], [-1, 3]) && !fitsDims([5], [-1, 3]));
});

Deno.test("with --shape, the data's own shape must equal it (perf_analyzer's model shape)", () => {
  const spec = { name: "INPUT0", datatype: "FP32" as const, dims: [-1] };
  assert.throws(
    () => resolveShape(spec, { given: [1], option: [2] }),
    (e) =>
      e instanceof InputError &&
      e.message === 'The supplied shape of [1] for input "INPUT0" is incompatible with the ' +
          "model's input shape of [2] (the shape given with the data; --shape INPUT0:2 stands " +
          "in for the model's dims [-1])",
  );
});

Deno.test("sized tensors: exact byte counts; outputs of unknown shape are taken flat", () => {
  const spec = { name: "OUT", datatype: "INT16" as const, dims: [-1, -1] };
  const data = new Uint8Array(6);
  assert.throws(() => sizedTensor(spec, data, {}), /fully defined/);
  assert.deepEqual(sizedTensor(spec, data, { role: "output", flexible: true }).shape, [3]);
  assert.throws(
    () => sizedTensor(spec, new Uint8Array(5), { option: [1, 3] }),
    /Expected: 6 bytes, Got: 5 bytes \(INT16, shape \[1,3\] from --shape\)/,
  );
});
