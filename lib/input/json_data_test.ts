import assert from "node:assert/strict";
import type { TensorSpec } from "../types/tensor.ts";
import { decodeBytesElements, tensorToJson } from "./codec.ts";
import type { DataModel } from "./data_set.ts";
import type { Datatype } from "../types/datatype.ts";
import { InputError } from "./errors.ts";
import { loadJsonData, parseJsonData } from "./json_data.ts";

const FIXTURES = new URL("../../fixtures/input_data/", import.meta.url).pathname;

function spec(name: string, datatype: Datatype, dims: number[]): TensorSpec {
  return { name, datatype, dims };
}

/** perf_analyzer's example model: INPUT0/INPUT1 -> OUTPUT0/OUTPUT1, INT32 [4,4]. */
const PAIR: DataModel = {
  name: "pair",
  inputs: [spec("INPUT0", "INT32", [4, 4]), spec("INPUT1", "INT32", [4, 4])],
  outputs: [spec("OUTPUT0", "INT32", [4, 4]), spec("OUTPUT1", "INT32", [4, 4])],
};

function parse(value: unknown, model: DataModel = PAIR, shapes = new Map<string, number[]>()) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return parseJsonData(text, { model, shapes, source: "d.json" });
}

function inputError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof InputError, String(error));
    assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
    return error.message;
  }
  assert.fail("expected an InputError");
}

const ones = new Array(16).fill(1);

Deno.test("a flat data array is one stream of steps, in order, with validation data", () => {
  const file = parse({
    data: [{ INPUT0: ones, INPUT1: ones }, { INPUT1: [...ones].fill(2), INPUT0: ones }],
    validation_data: [{ OUTPUT1: ones }, {}],
  });
  assert.equal(file.nested, false);
  assert.equal(file.streams.length, 1);
  const [first, second] = file.streams[0];
  assert.deepEqual(first.inputs.map((t) => [t.name, t.shape]), [
    ["INPUT0", [4, 4]],
    ["INPUT1", [4, 4]],
  ]);
  assert.deepEqual(tensorToJson("INT32", second.inputs[1].data), [...ones].fill(2));
  assert.deepEqual(first.outputs.map((t) => t.name), ["OUTPUT1"]);
  assert.deepEqual(second.outputs, []);
  assert.equal(second.where, '"d.json" data[1]');
});

Deno.test("nested data arrays are one stream per sequence (the seed's STRING example)", async () => {
  const model = { name: "s", inputs: [spec("INPUT", "BYTES", [1])], outputs: [] };
  const data = await loadJsonData([`${FIXTURES}streams.json`], { model, shapes: new Map() });
  assert.deepEqual(data.streams.map((s) => s.length), [4, 3, 2]);
  const first = data.streams[0].map((step) =>
    new TextDecoder().decode(decodeBytesElements(step.inputs[0].data)[0])
  );
  assert.deepEqual(first, ["1", "2", "3", "4"]);
  assert.match(data.streams[1][2].where, /data\[1\]\[2\]$/);
});

Deno.test("tensors: flat arrays, b64, content with a shape; with --shape the shapes must equal it", () => {
  const model = { name: "v", inputs: [spec("INPUT", "INT32", [-1, -1])], outputs: [] };
  const b64 = btoa(String.fromCharCode(...new Uint8Array(new Int32Array([1, 2, 3, 4]).buffer)));
  const file = parse(
    {
      data: [
        { INPUT: { content: ones, shape: [2, 8] } },
        { INPUT: { content: { b64 }, shape: [1, 4] } },
        { INPUT: { b64, shape: [4, 1] } },
      ],
    },
    model,
  );
  assert.deepEqual(file.streams[0].map((s) => s.inputs[0].shape), [[2, 8], [1, 4], [4, 1]]);
  assert.deepEqual(tensorToJson("INT32", file.streams[0][1].inputs[0].data), [1, 2, 3, 4]);
  const shapes = new Map([["INPUT", [1, 4]]]);
  const given = parse(
    { data: [{ INPUT: { b64, shape: [1, 4] } }, { INPUT: [[1, 2, 3, 4]] }] },
    model,
    shapes,
  );
  assert.deepEqual(given.streams[0].map((s) => s.inputs[0].shape), [[1, 4], [1, 4]]);
  assert.equal(
    inputError(() => parse({ data: [{ INPUT: { b64, shape: [4, 1] } }] }, model, shapes)),
    '"d.json" data[0].INPUT: The supplied shape of [4,1] for input "INPUT" is incompatible ' +
      "with the model's input shape of [1,4] (the shape given with the data; --shape " +
      "INPUT:1,4 stands in for the model's dims [-1,-1])",
  );
});

Deno.test("a single variable dim without any shape is taken from the data size", () => {
  const model = { name: "u", inputs: [spec("INPUT0", "UINT8", [-1])], outputs: [] };
  const file = parse({ data: [{ INPUT0: { b64: "YmFzZTY0IGRlY29kZXI=" } }] }, model);
  assert.deepEqual(file.streams[0][0].inputs[0].shape, [14]);
  const two = { name: "t", inputs: [spec("IN", "FP32", [3, -1])], outputs: [] };
  assert.deepEqual(
    parse({ data: [{ IN: new Array(12).fill(0.5) }] }, two).streams[0][0]
      .inputs[0].shape,
    [3, 4],
  );
});

Deno.test("64-bit integers beyond 2^53 and NaN/Infinity literals survive", () => {
  const model = {
    name: "m",
    inputs: [spec("I", "INT64", [2]), spec("F", "FP32", [3])],
    outputs: [],
  };
  const file = parse(
    '{"data": [{"I": [9007199254740993, -9223372036854775808], ' +
      '"F": [NaN, Infinity, -Infinity]}]}',
    model,
  );
  const [i, f] = file.streams[0][0].inputs;
  assert.deepEqual(tensorToJson("INT64", i.data), [9007199254740993n, -9223372036854775808n]);
  assert.deepEqual(tensorToJson("FP32", f.data), [NaN, Infinity, -Infinity]);
});

Deno.test("several files combine as in perf_analyzer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const write = (name: string, value: unknown) =>
      Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(value));
    const step = { INPUT0: ones, INPUT1: ones };
    await write("a.json", { data: [step, step] });
    await write("b.json", { data: [step] });
    await write("s.json", { data: [[step], [step, step]] });
    const options = { model: PAIR, shapes: new Map() };
    const flat = await loadJsonData([`${dir}/a.json`, `${dir}/b.json`], options);
    assert.deepEqual(flat.streams.map((s) => s.length), [3]);
    assert.match(flat.streams[0][2].where, /b\.json" data\[0\]$/);
    const nested = await loadJsonData([`${dir}/s.json`, `${dir}/s.json`], options);
    assert.deepEqual(nested.streams.map((s) => s.length), [1, 2, 1, 2]);
    await assert.rejects(
      loadJsonData([`${dir}/a.json`, `${dir}/s.json`], options),
      /s\.json": can not combine a file of streams \(arrays of steps\) with a file of steps/,
    );
    await assert.rejects(
      loadJsonData([`${dir}/missing.json`], options),
      (e) =>
        e instanceof InputError && /"\S*missing\.json": no such file or directory/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("malformed JSON names the file, line and column", () => {
  assert.equal(
    inputError(() => parse('{\n  "data": [\n    {"INPUT0": [1, 2 3]}\n  ]\n}')),
    `"d.json" line 3, column 22: invalid JSON: expected ',' or ']' after an array element`,
  );
  // JSON.parse itself gives no position for this one.
  assert.equal(
    inputError(() => parse('{"data": [x]}')),
    `"d.json" line 1, column 11: invalid JSON: unexpected character "x"`,
  );
  assert.match(inputError(() => parse("")), /line 1, column 1: invalid JSON: unexpected end/);
  assert.match(inputError(() => parse('{"data": [{"a": "\\q"}]}')), /column 18: .*invalid escape/);
});

Deno.test("each data problem is one line saying where", () => {
  const step = { INPUT0: ones, INPUT1: ones };
  const cases: Array<[unknown, string]> = [
    [
      { data: [step, { ...step, INPUTX: ones }] },
      "\"d.json\" data[1]: The input or output 'INPUTX' is not found in the model " +
      'configuration (model "pair" has inputs INPUT0, INPUT1)',
    ],
    [{ data: [{ INPUT0: ones }] }, '"d.json" data[0]: missing tensor INPUT1'],
    [
      { data: [{ ...step, INPUT1: ones.slice(1) }] },
      '"d.json" data[0].INPUT1: mismatch in the data provided for INPUT1. Expected: 64 bytes, ' +
      "Got: 60 bytes (INT32, shape [4,4] from the model)",
    ],
    [
      { data: [{ ...step, INPUT0: { b64: "AAAA$AAA" } }] },
      '"d.json" data[0].INPUT0: invalid base64: character "$" at offset 4',
    ],
    [
      { data: [{ ...step, INPUT0: { content: ones, shape: [2, 8] } }] },
      '"d.json" data[0].INPUT0: The supplied shape of [2,8] for input "INPUT0" is incompatible ' +
      "with the model's input shape of [4,4] (the shape given with the data)",
    ],
    [
      { data: [{ ...step, INPUT0: [...ones.slice(1), 1.5] }] },
      '"d.json" data[0].INPUT0: Invalid INT32 element 15: 1.5 is not an integer',
    ],
    [
      { data: [step], validation_data: [{ OUTPUT9: ones }] },
      "\"d.json\" validation_data[0]: The input or output 'OUTPUT9' is not found in the model " +
      'configuration (model "pair" has outputs OUTPUT0, OUTPUT1)',
    ],
    [
      { data: [step, step], validation_data: [{}] },
      `The 'validation_data' field doesn't align with 'data' field in the json file "d.json" ` +
      "(1 entries for 2)",
    ],
    [
      { data: [step, [step]] },
      '"d.json" data[1]: Inconsistency in input-data provided. Can not have a combination of ' +
      "objects and arrays inside of the Data array",
    ],
    [{ data: [] }, '"d.json": "data" is empty'],
    [
      { data: [step], validation: [] },
      '"d.json": unknown field "validation" (expected "data", "validation_data" or "model_inputs")',
    ],
    [
      { data: [{ ...step, INPUT0: { content: ones, shape: [4, 4], b64: "" } }] },
      '"d.json" data[0].INPUT0: a tensor has either "b64" or "content", not both',
    ],
    [{ data: [{ ...step, INPUT0: 5 }] }, '"d.json" data[0].INPUT0: expected an array of elements'],
  ];
  for (const [value, message] of cases) {
    const got = inputError(() => parse(value));
    assert.ok(got.startsWith(message), `${got}\n  does not start with\n${message}`);
  }
});

Deno.test("a variable shape the data does not define asks for --shape", () => {
  const model = { name: "v", inputs: [spec("INPUT", "INT32", [-1, -1])], outputs: [] };
  assert.equal(
    inputError(() => parse({ data: [{ INPUT: { content: ones } }] }, model)),
    '"d.json" data[0].INPUT: The variable-sized tensor "INPUT" with model shape [-1,-1] needs ' +
      "to have its shape fully defined. See the --shape option.",
  );
  assert.equal(
    inputError(() => parse({ data: [{ INPUT: ones }] }, model, new Map([["INPUT", [3, 5]]]))),
    '"d.json" data[0].INPUT: mismatch in the data provided for INPUT. Expected: 60 bytes, ' +
      "Got: 64 bytes (INT32, shape [3,5] from --shape)",
  );
});

Deno.test("BYTES: strings, b64 with length prefixes, and a clear message when absent", () => {
  const model = { name: "s", inputs: [spec("TEXT", "BYTES", [2])], outputs: [] };
  const b64 = btoa("\x02\x00\x00\x00hi\x00\x00\x00\x00");
  const file = parse({ data: [{ TEXT: ["a", "b"] }, { TEXT: { b64 } }] }, model);
  assert.equal(file.streams[0][1].inputs[0].data.byteLength, 10);
  assert.equal(
    inputError(() => parse({ data: [{}] }, model)),
    '"d.json" data[0]: missing tensor TEXT (a BYTES input needs its strings in the data, or ' +
      "--input-data TEXT:random with --string-length or --string-data)",
  );
  assert.match(
    inputError(() => parse({ data: [{ TEXT: { b64: btoa("\x09\x00\x00\x00hi") } }] }, model)),
    /data\[0\]\.TEXT: the BYTES data of "TEXT" is not a list of 4-byte length \+ bytes elements/,
  );
  assert.match(
    inputError(() => parse({ data: [{ TEXT: ["a"] }] }, model)),
    /Expected: 2 elements, Got: 1 elements \(BYTES, shape \[2\] from the model\)/,
  );
});

Deno.test("a step timestamp (fixed schedules) is kept", () => {
  const file = parse({ data: [{ INPUT0: ones, INPUT1: ones, timestamp: [250] }] });
  assert.equal(file.streams[0][0].timestampMs, 250);
});

Deno.test("a step may leave out an input the model marks optional; no other", () => {
  const model: DataModel = {
    ...PAIR,
    inputs: [PAIR.inputs[0], { ...PAIR.inputs[1], optional: true }],
  };
  const file = parse({ data: [{ INPUT0: ones }, { INPUT0: ones, INPUT1: ones }] }, model);
  assert.deepEqual(
    file.streams[0].map((s) => s.inputs.map((t) => t.name)),
    [["INPUT0"], ["INPUT0", "INPUT1"]],
  );
  assert.equal(
    inputError(() => parse({ data: [{ INPUT1: ones }] }, model)),
    '"d.json" data[0]: missing tensor INPUT0',
  );
});
