import assert from "node:assert/strict";
import type { Tensor } from "../types/tensor.ts";
import { encodeBytesElements, tensorFromJson } from "./codec.ts";
import type { Datatype } from "../types/datatype.ts";
import { createOutputCheck } from "./validation.ts";

function tensor(name: string, datatype: Datatype, values: unknown[]): Tensor {
  return { name, datatype, shape: [values.length], data: tensorFromJson(datatype, values) };
}

Deno.test("matching outputs pass; extra outputs in the response are ignored", () => {
  const check = createOutputCheck([tensor("OUT", "INT32", [1, 2, 3])], { steps: ["s0"] });
  assert.equal(
    check([tensor("OTHER", "FP32", [0]), tensor("OUT", "INT32", [1, 2, 3])]),
    undefined,
  );
});

Deno.test("a mismatch names the output, the step, the element and both values", () => {
  const expected = [tensor("OUTPUT0", "INT32", [0, 0, 0, 0]), tensor("OUTPUT1", "INT32", [2, 2])];
  const check = createOutputCheck(expected, { steps: ['"d.json" data[0]', '"d.json" data[1]'] });
  assert.equal(
    check([tensor("OUTPUT0", "INT32", [0, 0, 0, 7]), tensor("OUTPUT1", "INT32", [2, 2])]),
    `Output doesn't match expected output: OUTPUT0 at "d.json" data[1], element 1: ` +
      "expected 0, got 7",
  );
  assert.equal(
    check([tensor("OUTPUT0", "INT32", [0, 0, 0, 0])]),
    `Output doesn't match expected output: OUTPUT1 is missing from the response ` +
      `("d.json" data[0] (and 1 more steps))`,
  );
  assert.match(
    check([tensor("OUTPUT0", "INT32", [0, 0, 0]), expected[1]])!,
    /OUTPUT0 has 3 elements, expected 4/,
  );
  assert.match(
    check([tensor("OUTPUT0", "INT64", [0, 0, 0, 0])])!,
    /OUTPUT0 is INT64, expected INT32/,
  );
});

Deno.test("floats compare bytes by default; --validation-tolerance relaxes only floats", () => {
  for (const datatype of ["FP16", "BF16", "FP32", "FP64"] as const) {
    const want = [tensor("Y", datatype, [1, 1000, NaN])];
    const near = [tensor("Y", datatype, [1.0078125, 1003, NaN])];
    assert.match(createOutputCheck(want, { steps: ["s"] })(near)!, /Y at s, element 0/, datatype);
    assert.equal(createOutputCheck(want, { steps: ["s"], tolerance: 0.01 })(near), undefined);
    const far = [tensor("Y", datatype, [1, 1020, NaN])];
    assert.match(
      createOutputCheck(want, { steps: ["s"], tolerance: 0.01 })(far)!,
      /Y at s, element 1: expected 1000, got 10[12]\d/,
    );
  }
  const ints = [tensor("I", "INT8", [1])];
  assert.match(
    createOutputCheck(ints, { steps: ["s"], tolerance: 10 })([tensor("I", "INT8", [2])])!,
    /expected 1, got 2/,
  );
});

Deno.test("BYTES outputs compare element by element", () => {
  const bytes = (...s: string[]): Tensor => ({
    name: "T",
    datatype: "BYTES",
    shape: [s.length],
    data: encodeBytesElements(s),
  });
  const check = createOutputCheck([bytes("ab", "cd")], { steps: ["s0"] });
  assert.equal(check([bytes("ab", "cd")]), undefined);
  assert.equal(
    check([bytes("ab", "cde")]),
    `Output doesn't match expected output: T at s0, element 1: expected "cd", got "cde"`,
  );
  assert.match(check([bytes("ab")])!, /T has 1 elements, expected 2/);
});
