import assert from "node:assert/strict";
import { outputSlotBytes, placementOf, SystemSharedMemory } from "../protocol/shm.ts";
import type { TensorSpec } from "../types/tensor.ts";

const image: TensorSpec = { name: "OUTPUT0", datatype: "FP32", dims: [3, 224, 224] };
const text: TensorSpec = { name: "OUTPUT1", datatype: "BYTES", dims: [1] };
const ragged: TensorSpec = { name: "OUTPUT2", datatype: "INT8", dims: [-1] };

Deno.test("output slots: fixed outputs from the model x batch, variable ones from the option", () => {
  const model = { outputs: [image, text, ragged], maxBatchSize: 64 };
  const bytes = outputSlotBytes(model, { batchSize: 64, variableBytes: 100 * 1024 });
  // perf_analyzer's figure for a 3x224x224 FP32 output at batch 64.
  assert.equal(bytes("OUTPUT0"), 38_535_168);
  assert.equal(bytes("OUTPUT1"), 64 * 102_400);
  assert.equal(bytes("OUTPUT2"), 64 * 102_400);
  // A model that does not batch: -b is 1 and the shape has no batch dimension.
  const single = outputSlotBytes({ outputs: [image], maxBatchSize: 0 }, {
    batchSize: 1,
    variableBytes: 8,
  });
  assert.equal(single("OUTPUT0"), 602_112);
});

Deno.test("output slots of different sizes do not overlap and fill the region", async () => {
  const directory = await Deno.makeTempDir({ prefix: "inferperf_shm_" });
  try {
    const sizes: Record<string, number> = { A: 100, B: 1000 };
    const request = (value: number) => ({
      inputs: [{ name: "IN", datatype: "UINT8" as const, shape: [1], data: Uint8Array.of(value) }],
      outputs: ["A", "B"],
    });
    const requests = [request(1), request(2)];
    const memory = new SystemSharedMemory(requests, {
      outputByteSize: (name) => sizes[name],
      directory,
    });
    try {
      const refs = requests.flatMap((r) => placementOf(memory.place(r))!.outputs);
      assert.deepEqual(refs.map((r) => [r.offset, r.byteSize]), [
        [0, 100],
        [128, 1000],
        [1152, 100],
        [1280, 1000],
      ]);
      assert.equal(memory.regions[1].byteSize, 2304);
    } finally {
      await memory.release({
        registerSystemSharedMemory: () => Promise.resolve(),
        unregisterSystemSharedMemory: () => Promise.resolve(),
      });
    }
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});
