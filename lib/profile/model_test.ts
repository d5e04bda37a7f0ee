import assert from "node:assert/strict";
import type { InferenceClient } from "../protocol/types.ts";
import type { ModelInfo } from "../types/model.ts";
import { discoverModel } from "./model.ts";

function info(name: string, options: Partial<ModelInfo> = {}): ModelInfo {
  return {
    name,
    version: "",
    platform: "",
    versions: [],
    inputs: [],
    outputs: [],
    maxBatchSize: 0,
    decoupled: false,
    sequence: false,
    composingModels: [],
    responseCache: false,
    ...options,
  };
}

/** A client that knows `models` and records which it was asked about. */
function client(models: ModelInfo[]): InferenceClient & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    modelInfo(name: string, version: string) {
      asked.push(`${name}:${version}`);
      const model = models.find((m) => m.name === name);
      return model ? Promise.resolve(model) : Promise.reject(new Error(`unknown model ${name}`));
    },
  } as unknown as InferenceClient & { asked: string[] };
}

const top = { name: "ensemble", version: "" };

Deno.test("an ensemble with a sequence model among its steps, at any depth, is a sequence model", async () => {
  const models = [
    info("ensemble", { composingModels: ["pre", "inner"] }),
    info("pre"),
    info("inner", { composingModels: ["seq"] }),
    info("seq", { sequence: true }),
  ];
  const fake = client(models);
  const model = await discoverModel(fake, { model: top, composing: [] });
  assert.equal(model.sequence, true);
  assert.equal(model.name, "ensemble");
  assert.deepEqual(fake.asked, ["ensemble:", "pre:", "inner:", "seq:"]);
});

Deno.test("--bls-composing-models are read with their versions, and their steps", async () => {
  const models = [
    info("bls"),
    info("plain"),
    info("sub_ensemble", { composingModels: ["seq"] }),
    info("seq", { sequence: true }),
  ];
  const fake = client(models);
  const model = await discoverModel(fake, {
    model: { name: "bls", version: "3" },
    composing: [{ name: "plain", version: "1" }, { name: "sub_ensemble", version: "" }],
  });
  assert.equal(model.sequence, true);
  assert.deepEqual(fake.asked, ["bls:3", "plain:1", "sub_ensemble:", "seq:"]);
});

Deno.test("models without sequence steps stay as they are; each model is read once", async () => {
  const models = [
    info("ensemble", { composingModels: ["a", "b"] }),
    info("a", { composingModels: ["b"] }),
    info("b"),
  ];
  const fake = client(models);
  const model = await discoverModel(fake, { model: top, composing: [] });
  assert.equal(model, models[0]);
  assert.deepEqual(fake.asked, ["ensemble:", "a:", "b:"]);
  // A sequence model itself needs no further look-up.
  const seq = client([info("seq", { sequence: true, composingModels: ["x"] })]);
  assert.equal(
    (await discoverModel(seq, { model: { name: "seq", version: "" }, composing: [] }))
      .sequence,
    true,
  );
  assert.deepEqual(seq.asked, ["seq:"]);
});
