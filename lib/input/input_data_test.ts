import assert from "node:assert/strict";
import { decodeBytesElements, tensorToJson } from "./codec.ts";
import type { DataModel } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { mulberry32 } from "./generate.ts";
import { type DataSetOptions, loadDataSet, parseInputData } from "./input_data.ts";

const MODEL: DataModel = {
  name: "bert",
  inputs: [
    { name: "ids", datatype: "INT64", dims: [8] },
    { name: "mask", datatype: "BOOL", dims: [8] },
    { name: "text", datatype: "BYTES", dims: [2] },
  ],
  outputs: [{ name: "logits", datatype: "FP32", dims: [2] }],
};

function options(overrides: Partial<DataSetOptions> = {}): DataSetOptions {
  return { model: MODEL, shapes: new Map(), stringLength: 4, rng: mulberry32(3), ...overrides };
}

Deno.test("option values: modes, per-input modes with ranges, paths", () => {
  assert.deepEqual(parseInputData([]), { perInput: new Map(), paths: [] });
  const spec = parseInputData([
    "zero",
    "ids:random:1:99",
    "a:b:zero",
    "x.json",
    "big:random:0:1e3",
  ]);
  assert.equal(spec.mode, "zero");
  assert.deepEqual(spec.perInput.get("ids"), { mode: "random", range: { min: 1, max: 99 } });
  assert.deepEqual(spec.perInput.get("a:b"), { mode: "zero" });
  assert.deepEqual(spec.perInput.get("big")?.range, { min: 0, max: 1000 });
  assert.deepEqual(spec.paths, ["x.json"]);
  assert.deepEqual(
    parseInputData(["u:random:0:18446744073709551615"]).perInput.get("u")?.range?.max,
    18446744073709551615n,
  );
  assert.throws(() => parseInputData(["ids:zero", "ids:random"]), /"ids" is given twice/);
  assert.throws(() => parseInputData(["ids:zero:1:2"]), /NAME:random:MIN:MAX/);
});

Deno.test("generated data: one step, generated once per input, per-input modes and ranges", async () => {
  const spec = parseInputData(["ids:random:5:9", "mask:zero"]);
  const data = await loadDataSet(spec, options({ stringData: "hi" }));
  assert.equal(data.streams.length, 1);
  const [step] = data.streams[0];
  assert.equal(step.where, "generated data (random)");
  const [ids, mask, text] = step.inputs;
  assert.deepEqual(ids.shape, [8]);
  for (const v of tensorToJson("INT64", ids.data)) assert.ok(Number(v) >= 5 && Number(v) <= 9);
  assert.deepEqual(tensorToJson("BOOL", mask.data), new Array(8).fill(false));
  assert.deepEqual(decodeBytesElements(text.data).length, 2);
  const zero = await loadDataSet(parseInputData(["zero"]), options());
  assert.deepEqual(tensorToJson("INT64", zero.streams[0][0].inputs[0].data), new Array(8).fill(0));
});

Deno.test("names and ranges that do not fit the model are input errors", async () => {
  await assert.rejects(
    loadDataSet(parseInputData(["idz:zero"]), options()),
    (e) =>
      e instanceof InputError &&
      e.message === 'Option --input-data names "idz", which is not an input of model "bert" ' +
          "(inputs: ids, mask, text)",
  );
  await assert.rejects(
    loadDataSet(parseInputData([]), options({ shapes: new Map([["IDS", [3]]]) })),
    /Option --shape names "IDS", which is not an input/,
  );
  await assert.rejects(
    loadDataSet(parseInputData(["mask:random:0:1"]), options()),
    /--input-data "mask:random:0:1": A value range does not apply to BOOL input "mask"/,
  );
  await assert.rejects(
    loadDataSet(parseInputData(["ids:random:0:1.5"]), options()),
    /--input-data "ids:random:0:1.5": Value range \[0, 1.5\] is not an integer range/,
  );
  const variable = { ...MODEL, inputs: [{ name: "v", datatype: "FP32" as const, dims: [-1] }] };
  await assert.rejects(
    loadDataSet(parseInputData([]), options({ model: variable })),
    /^InputError: Input "v": The variable-sized tensor "v" with model shape \[-1\] needs to have/,
  );
});

Deno.test("per-input modes and an explicit mode fill inputs that files leave out", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/d.json`,
      JSON.stringify({ data: [{ ids: [1, 2, 3, 4, 5, 6, 7, 8] }] }),
    );
    const file = `${dir}/d.json`;
    await assert.rejects(
      loadDataSet(parseInputData([file]), options()),
      /d\.json" data\[0\]: missing tensor mask$/,
    );
    const filled = await loadDataSet(parseInputData([file, "mask:zero", "text:random"]), options());
    assert.deepEqual(filled.streams[0][0].inputs.map((t) => t.name), ["ids", "mask", "text"]);
    const zero = await loadDataSet(parseInputData(["zero", file]), options());
    assert.deepEqual(tensorToJson("BOOL", zero.streams[0][0].inputs[1].data)[0], false);
    await assert.rejects(
      loadDataSet(parseInputData([dir, file]), options()),
      /--input-data "\S+" is a directory, which can not be combined with other directories or files/,
    );
    await assert.rejects(
      loadDataSet(parseInputData([`${dir}/nope`]), options()),
      /^InputError: --input-data "\S+\/nope": no such file or directory$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
