import assert from "node:assert/strict";
import { type Datatype, DATATYPES, elementSize } from "../types/datatype.ts";
import { byteSizeOf, decodeBytesElements, tensorToJson } from "./codec.ts";
import {
  DEFAULT_STRING_LENGTH,
  generateTensor,
  mulberry32,
  STRING_CHARACTERS,
} from "./generate.ts";

const spec = (datatype: Datatype, shape = [4, 64]) => ({ name: "IN", datatype, shape });
const text = new TextDecoder();

Deno.test("mulberry32 is deterministic, uniform and in [0, 1)", () => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const c = mulberry32(43);
  const buckets = new Array(10).fill(0);
  let differs = false;
  for (let i = 0; i < 100_000; i++) {
    const x = a();
    assert.equal(x, b());
    if (x !== c()) differs = true;
    assert.ok(x >= 0 && x < 1);
    buckets[Math.floor(x * 10)]++;
  }
  assert.ok(differs);
  for (const n of buckets) assert.ok(n > 9_500 && n < 10_500, `bucket ${n}`);
});

Deno.test("random data is valid for every datatype", () => {
  const rng = mulberry32(1);
  for (const datatype of DATATYPES) {
    const tensor = generateTensor(spec(datatype), { mode: "random", rng });
    assert.equal(tensor.name, "IN");
    assert.equal(tensor.datatype, datatype);
    assert.deepEqual(tensor.shape, [4, 64]);
    const values = tensorToJson(datatype, tensor.data);
    assert.equal(values.length, 256, datatype);
    if (datatype === "BOOL") {
      assert.deepEqual(new Set(tensor.data), new Set([0, 1]));
    } else if (datatype.startsWith("FP") || datatype === "BF16") {
      for (const v of values) {
        assert.ok(typeof v === "number" && v >= 0 && v < 1, `${datatype} ${v}`);
      }
      assert.ok(new Set(values).size > 100, datatype);
    } else if (datatype === "BYTES") {
      for (const v of values) {
        assert.equal((v as string).length, DEFAULT_STRING_LENGTH);
        for (const c of v as string) assert.ok(STRING_CHARACTERS.includes(c));
      }
    } else {
      // Whole range: both halves of the range show up, including negatives for signed types.
      const numbers = values.map(Number);
      if (datatype.startsWith("INT")) assert.ok(numbers.some((v) => v < 0), datatype);
      assert.ok(new Set(numbers).size > 50, datatype);
    }
  }
});

Deno.test("float grids keep values below 1 after rounding", () => {
  // A generator returning the largest value below 1 is the worst case for rounding up.
  const rng = () => 1 - 2 ** -53;
  for (const datatype of ["FP16", "BF16", "FP32", "FP64"] as const) {
    const [v] = tensorToJson(
      datatype,
      generateTensor(spec(datatype, [1]), { mode: "random", rng }).data,
    );
    assert.ok((v as number) < 1 && (v as number) > 0.99, `${datatype} ${v}`);
  }
});

Deno.test("zero data is all zero bytes for fixed-size types", () => {
  for (const datatype of DATATYPES) {
    if (datatype === "BYTES") continue;
    const tensor = generateTensor(spec(datatype, [3, 5]), { mode: "zero" });
    assert.equal(tensor.data.byteLength, byteSizeOf(datatype, [3, 5]));
    assert.ok(tensor.data.every((b) => b === 0), datatype);
  }
});

Deno.test("BYTES uses stringData, else random strings of stringLength, in both modes", () => {
  const data = generateTensor(spec("BYTES", [3]), { mode: "zero", stringData: "héllo" }).data;
  assert.deepEqual(tensorToJson("BYTES", data), ["héllo", "héllo", "héllo"]);
  for (const mode of ["zero", "random"] as const) {
    const elements = decodeBytesElements(
      generateTensor(spec("BYTES", [2, 3]), { mode, stringLength: 7, stringData: "" }).data,
    );
    assert.equal(elements.length, 6);
    for (const e of elements) assert.match(text.decode(e), /^[a-zA-Z0-9 .?!]{7}$/);
  }
  const empty = generateTensor(spec("BYTES", [2]), { mode: "random", stringLength: 0 }).data;
  assert.deepEqual(tensorToJson("BYTES", empty), ["", ""]);
  assert.equal(generateTensor(spec("BYTES", [0]), { mode: "random" }).data.byteLength, 0);
});

Deno.test("a seeded rng reproduces the same tensor", () => {
  for (const datatype of DATATYPES) {
    const a = generateTensor(spec(datatype), { mode: "random", rng: mulberry32(7) });
    const b = generateTensor(spec(datatype), { mode: "random", rng: mulberry32(7) });
    assert.deepEqual(a.data, b.data, datatype);
  }
});

Deno.test("value ranges bound integers inclusively and floats half-open", () => {
  const rng = mulberry32(3);
  const cases: [Datatype, number | bigint, number | bigint][] = [
    ["INT8", -3, 3],
    ["UINT8", 250, 255],
    ["INT16", -32768, -32760],
    ["UINT32", 4294967290, 4294967295],
    ["INT32", 0, 0],
    ["INT64", -(2n ** 63n), -(2n ** 63n) + 5n],
    ["UINT64", 2n ** 64n - 4n, 2n ** 64n - 1n],
    ["INT64", -(2n ** 62n), 2n ** 62n], // span beyond 2^32
  ];
  for (const [datatype, min, max] of cases) {
    const values = tensorToJson(
      datatype,
      generateTensor(spec(datatype, [500]), { mode: "random", rng, range: { min, max } }).data,
    ).map(BigInt);
    for (const v of values) assert.ok(v >= BigInt(min) && v <= BigInt(max), `${datatype} ${v}`);
    const distinct = new Set(values).size;
    const span = BigInt(max) - BigInt(min) + 1n;
    if (span <= 10n) assert.equal(BigInt(distinct), span, `${datatype} covers its range`);
    else assert.ok(distinct > 400, datatype);
  }
  for (const datatype of ["FP16", "BF16", "FP32", "FP64"] as const) {
    const values = tensorToJson(
      datatype,
      generateTensor(spec(datatype, [500]), { mode: "random", rng, range: { min: -8, max: 8 } })
        .data,
    ) as number[];
    for (const v of values) assert.ok(v >= -8 && v < 8, `${datatype} ${v}`);
    assert.ok(values.some((v) => v < -4) && values.some((v) => v > 4), datatype);
  }
});

Deno.test("invalid shapes, ranges and string lengths are rejected", () => {
  assert.throws(() => generateTensor(spec("FP32", [1, -1]), { mode: "zero" }), {
    name: "RangeError",
    message: 'Shape [1,-1] of "IN" is not fully defined',
  });
  assert.throws(
    () => generateTensor(spec("INT8"), { mode: "random", range: { min: 0, max: 128 } }),
    {
      name: "RangeError",
      message: "Value range [0, 128] is not an integer range within INT8 [-128, 127]",
    },
  );
  assert.throws(
    () => generateTensor(spec("INT32"), { mode: "random", range: { min: 5, max: 4 } }),
    RangeError,
  );
  assert.throws(
    () => generateTensor(spec("INT32"), { mode: "random", range: { min: 0.5, max: 4 } }),
    RangeError,
  );
  assert.throws(
    () => generateTensor(spec("FP32"), { mode: "random", range: { min: 1, max: 1 } }),
    {
      name: "RangeError",
      message: "Value range [1, 1] of a FP32 input needs finite min < max",
    },
  );
  assert.throws(
    () => generateTensor(spec("BOOL"), { mode: "random", range: { min: 0, max: 1 } }),
    { name: "TypeError", message: 'A value range does not apply to BOOL input "IN"' },
  );
  assert.throws(
    () => generateTensor(spec("BYTES"), { mode: "random", stringLength: -1 }),
    { name: "RangeError", message: "String length -1 is not a non-negative integer" },
  );
});

// A cost in proportion to drawing the tensor's random numbers, not an absolute time: a loaded
// machine slows both alike, while a per-element allocation or conversion would show as a ratio.
Deno.test("a 10 MB random tensor costs a few times drawing its random numbers", () => {
  for (const datatype of ["FP32", "FP16", "INT64", "UINT8"] as const) {
    const count = 10 * 1024 * 1024 / elementSize(datatype);
    const rng = mulberry32(9);
    const floor = performance.now();
    let sink = 0;
    for (let i = 0; i < count; i++) sink += rng();
    const floorMs = performance.now() - floor;
    const t0 = performance.now();
    const tensor = generateTensor(spec(datatype, [count]), { mode: "random", rng: mulberry32(9) });
    const ms = performance.now() - t0;
    assert.equal(tensor.data.byteLength, 10 * 1024 * 1024);
    assert.ok(sink > 0);
    assert.ok(
      ms < 20 * floorMs + 50,
      `${datatype} took ${ms.toFixed(0)} ms (${floorMs.toFixed(0)} ms to draw)`,
    );
  }
});
