import assert from "node:assert/strict";
import { decodeBytesElements, tensorToJson } from "./codec.ts";
import type { DataModel } from "./data_set.ts";
import { loadDirectoryData } from "./directory_data.ts";
import { InputError } from "./errors.ts";

const SIMPLE_DIR = new URL("../../fixtures/input_data/simple_dir", import.meta.url).pathname;

const SIMPLE: DataModel = {
  name: "simple",
  inputs: [
    { name: "INPUT0", datatype: "INT32", dims: [16] },
    { name: "INPUT1", datatype: "INT32", dims: [16] },
  ],
  outputs: [
    { name: "OUTPUT0", datatype: "INT32", dims: [16] },
    { name: "OUTPUT1", datatype: "INT32", dims: [16] },
  ],
};

async function withDir(
  files: Record<string, Uint8Array | string>,
  fn: (dir: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  try {
    for (const [name, content] of Object.entries(files)) {
      if (typeof content === "string") await Deno.writeTextFile(`${dir}/${name}`, content);
      else await Deno.writeFile(`${dir}/${name}`, content);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a directory is one step: raw inputs and optional outputs for validation", async () => {
  const data = await loadDirectoryData(SIMPLE_DIR, { model: SIMPLE, shapes: new Map() });
  assert.equal(data.streams.length, 1);
  const [step] = data.streams[0];
  assert.deepEqual(tensorToJson("INT32", step.inputs[0].data), [...Array(16).keys()]);
  assert.deepEqual(step.outputs.map((t) => t.name), ["OUTPUT0", "OUTPUT1"]);
  assert.deepEqual(tensorToJson("INT32", step.outputs[0].data)[15], 18);
});

Deno.test("a wrong file size names the file, the expected and the actual bytes", async () => {
  await withDir({ INPUT0: new Uint8Array(64), INPUT1: new Uint8Array(60) }, async (dir) => {
    await assert.rejects(
      loadDirectoryData(dir, { model: SIMPLE, shapes: new Map() }),
      (e) =>
        e instanceof InputError &&
        e.message === `"${dir}/INPUT1": mismatch in the data provided for INPUT1. Expected: ` +
            "64 bytes, Got: 60 bytes (INT32, shape [16] from the model)",
    );
  });
});

Deno.test("stray files and missing inputs are errors", async () => {
  await withDir({ INPUT0: new Uint8Array(64), NOTES: "x" }, async (dir) => {
    await assert.rejects(
      loadDirectoryData(dir, { model: SIMPLE, shapes: new Map() }),
      /NOTES": Provided data file 'NOTES' does not correspond to a valid model input or output/,
    );
  });
  await withDir({ INPUT0: new Uint8Array(64) }, async (dir) => {
    await assert.rejects(
      loadDirectoryData(dir, { model: SIMPLE, shapes: new Map() }),
      new RegExp(
        `directory "${dir}": missing tensor INPUT1: no file "${dir}/INPUT1" \\(raw bytes\\)`,
      ),
    );
  });
});

Deno.test("BYTES files hold one string per line; variable dims take --shape or the size", async () => {
  const model: DataModel = {
    name: "m",
    inputs: [
      { name: "TEXT", datatype: "BYTES", dims: [-1] },
      { name: "IMG", datatype: "UINT8", dims: [2, -1] },
    ],
    outputs: [],
  };
  await withDir({ TEXT: "hello\nworld\n", IMG: new Uint8Array(6) }, async (dir) => {
    const data = await loadDirectoryData(dir, { model, shapes: new Map([["TEXT", [2]]]) });
    const [text, img] = data.streams[0][0].inputs;
    assert.deepEqual(
      decodeBytesElements(text.data).map((e) => new TextDecoder().decode(e)),
      ["hello", "world"],
    );
    assert.deepEqual(img.shape, [2, 3]);
  });
  await withDir({ IMG: new Uint8Array(6) }, async (dir) => {
    await assert.rejects(
      loadDirectoryData(dir, { model, shapes: new Map() }),
      /missing tensor TEXT \(a BYTES input needs its strings.*no file "\S+\/TEXT" \(one string per line\)/,
    );
  });
});

Deno.test("a directory may leave out an input the model marks optional", async () => {
  const model = { ...SIMPLE, inputs: [SIMPLE.inputs[0], { ...SIMPLE.inputs[1], optional: true }] };
  await withDir({ INPUT0: new Uint8Array(64) }, async (dir) => {
    const data = await loadDirectoryData(dir, { model, shapes: new Map() });
    assert.deepEqual(data.streams[0][0].inputs.map((t) => t.name), ["INPUT0"]);
  });
  await withDir({ INPUT1: new Uint8Array(64) }, async (dir) => {
    await assert.rejects(
      () => loadDirectoryData(dir, { model, shapes: new Map() }),
      (e) => e instanceof InputError && /missing tensor INPUT0/.test(e.message),
    );
  });
});
