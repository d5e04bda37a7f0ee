import assert from "node:assert/strict";
import { UsageError } from "../types/errors.ts";
import { parseJsonData } from "./json_data.ts";
import { formatTemplate, inputTemplate } from "./template.ts";
import type { TensorSpec } from "../types/tensor.ts";

const INPUTS: TensorSpec[] = [
  { name: "IDS", datatype: "INT64", dims: [-1] },
  { name: "MASK", datatype: "BOOL", dims: [2], optional: true },
  { name: "TEXT", datatype: "BYTES", dims: [1] },
];

Deno.test("a template gives every input in its shape and marks the optional ones", () => {
  const json = inputTemplate(INPUTS, { shapes: new Map([["IDS", [3]]]), stringData: "hi" });
  assert.deepEqual(json, {
    model_inputs: {
      IDS: { datatype: "INT64", dims: [-1], optional: false },
      MASK: { datatype: "BOOL", dims: [2], optional: true },
      TEXT: { datatype: "BYTES", dims: [1], optional: false },
    },
    data: [{
      IDS: { content: [0, 0, 0], shape: [3] },
      MASK: { content: [false, false], shape: [2] },
      TEXT: { content: ["hi"], shape: [1] },
    }],
  });
  // What it writes is input data as it is.
  const file = parseJsonData(formatTemplate(json), {
    model: { name: "m", inputs: INPUTS, outputs: [] },
    shapes: new Map(),
    source: "t.json",
  });
  assert.equal(file.streams[0].length, 1);
});

Deno.test("every variable dim without --shape is named; a --shape that does not fit too", () => {
  const twice = [INPUTS[0], { ...INPUTS[0], name: "POS" }];
  assert.throws(() => inputTemplate(twice, { shapes: new Map() }), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.equal(e.errors.length, 2);
    assert.match(
      e.errors[1],
      /"POS" with model shape \[-1\] needs to have its shape fully defined/,
    );
    return true;
  });
  assert.throws(
    () => inputTemplate([INPUTS[1]], { shapes: new Map([["MASK", [3]]]) }),
    /is incompatible with the model's input shape of \[2\] \(given with --shape\)/,
  );
});

Deno.test("the template's JSON keeps short values and arrays of scalars on one line", () => {
  assert.equal(formatTemplate({ a: [1, 2], b: { c: "x" } }), '{ "a": [1, 2], "b": { "c": "x" } }');
  const long = { data: [{ T: { content: Array(40).fill(0), shape: [40] } }] };
  assert.equal(formatTemplate(long).split("\n").length, 10);
});
