import assert from "node:assert/strict";
import { type Datatype, DATATYPES } from "../types/datatype.ts";
import {
  bf16BitsToF32,
  byteSizeOf,
  decodeBytesElements,
  encodeBytesElements,
  f16BitsToF32,
  f32ToBf16Bits,
  f32ToF16Bits,
  integerRange,
  type JsonElement,
  tensorFromJson,
  tensorToJson,
} from "./codec.ts";

const hex = (bits: number) => `0x${bits.toString(16).padStart(4, "0")}`;

Deno.test("f32ToF16Bits matches known bit patterns", () => {
  const cases: [number, number][] = [
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.1, 0x2e66],
    [1 / 3, 0x3555],
    [65504, 0x7bff],
    [65519.99, 0x7bff],
    [65520, 0x7c00], // halfway to 65536: ties to even carries into the exponent
    [1e10, 0x7c00],
    [-1e10, 0xfc00],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
    [2 ** -14, 0x0400], // smallest normal
    [2 ** -14 - 2 ** -25, 0x0400], // tie between largest subnormal and smallest normal
    [2 ** -14 - 2 ** -24, 0x03ff], // largest subnormal
    [2 ** -24, 0x0001], // smallest subnormal
    [2 ** -25, 0x0000], // tie: to even (zero)
    [-(2 ** -25), 0x8000],
    [1.5 * 2 ** -25, 0x0001],
    [3 * 2 ** -25, 0x0002], // tie between 1 and 2 ulps: to even
    [1 + 2 ** -11, 0x3c00], // tie: to even
    [1 + 3 * 2 ** -11, 0x3c02], // tie: to even
    // Rounding through float32 first would drop 2^-40 and round the tie down.
    [1 + 2 ** -11 + 2 ** -40, 0x3c01],
    [Number.MIN_VALUE, 0x0000],
    [Number.MAX_VALUE, 0x7c00],
  ];
  for (const [x, bits] of cases) {
    assert.equal(hex(f32ToF16Bits(x)), hex(bits), `f32ToF16Bits(${x})`);
  }
  assert.equal(hex(f32ToF16Bits(NaN)), "0x7e00");
});

Deno.test("f16BitsToF32 matches known values", () => {
  assert.equal(f16BitsToF32(0x3c00), 1);
  assert.equal(f16BitsToF32(0x7bff), 65504);
  assert.equal(f16BitsToF32(0x0001), 2 ** -24);
  assert.equal(f16BitsToF32(0x03ff), 2 ** -14 - 2 ** -24);
  assert.equal(f16BitsToF32(0x0400), 2 ** -14);
  assert.equal(f16BitsToF32(0x7c00), Infinity);
  assert.equal(f16BitsToF32(0xfc00), -Infinity);
  assert.ok(Object.is(f16BitsToF32(0x8000), -0));
  assert.ok(Number.isNaN(f16BitsToF32(0x7c01)));
  assert.ok(Number.isNaN(f16BitsToF32(0xfe00)));
});

Deno.test("f32ToBf16Bits matches known bit patterns", () => {
  const cases: [number, number][] = [
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3f80],
    [-2, 0xc000],
    [Math.PI, 0x4049],
    [0.1, 0x3dcd],
    [(2 - 2 ** -7) * 2 ** 127, 0x7f7f], // largest finite
    [(2 - 2 ** -8) * 2 ** 127, 0x7f80], // tie above the largest finite: to even is infinity
    [3.4028234663852886e38, 0x7f80], // float32 max
    [Infinity, 0x7f80],
    [-Infinity, 0xff80],
    [2 ** -126, 0x0080], // smallest normal
    [2 ** -133, 0x0001], // smallest subnormal
    [2 ** -134, 0x0000], // tie: to even (zero)
    [3 * 2 ** -134, 0x0002],
    [1 + 2 ** -8, 0x3f80], // tie: to even
    [1 + 3 * 2 ** -8, 0x3f82],
  ];
  for (const [x, bits] of cases) {
    assert.equal(hex(f32ToBf16Bits(x)), hex(bits), `f32ToBf16Bits(${x})`);
  }
  assert.equal(hex(f32ToBf16Bits(NaN)), "0x7fc0");
  assert.ok(Object.is(bf16BitsToF32(0x8000), -0));
  assert.equal(bf16BitsToF32(0x0001), 2 ** -133);
  assert.equal(bf16BitsToF32(0x7f80), Infinity);
  assert.ok(Number.isNaN(bf16BitsToF32(0x7fc0)));
});

Deno.test("every 16-bit pattern round trips and midpoints round to even", () => {
  const formats = [
    { name: "FP16", encode: f32ToF16Bits, decode: f16BitsToF32, maxFinite: 0x7bff },
    { name: "BF16", encode: f32ToBf16Bits, decode: bf16BitsToF32, maxFinite: 0x7f7f },
  ];
  for (const { name, encode, decode, maxFinite } of formats) {
    for (let bits = 0; bits <= 0xffff; bits++) {
      const x = decode(bits);
      if (Number.isNaN(x)) continue;
      assert.equal(encode(x), bits, `${name} ${hex(bits)}`);
    }
    for (let bits = 0; bits < maxFinite; bits++) {
      const low = decode(bits);
      const high = decode(bits + 1);
      const mid = (low + high) / 2; // exact in float64
      const even = bits % 2 === 0 ? bits : bits + 1;
      assert.equal(encode(mid), even, `${name} midpoint above ${hex(bits)}`);
      assert.equal(encode(-mid), even | 0x8000, `${name} midpoint below -${hex(bits)}`);
      const ulp = (high - low) / 1024;
      assert.equal(encode(mid - ulp), bits, `${name} just below midpoint ${hex(bits)}`);
      assert.equal(encode(mid + ulp), bits + 1, `${name} just above midpoint ${hex(bits)}`);
    }
  }
});

Deno.test("f32ToBf16Bits agrees with the float32 bit rounding formula", () => {
  const view = new DataView(new ArrayBuffer(4));
  let state = 12345;
  for (let i = 0; i < 100_000; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    view.setUint32(0, state);
    const x = view.getFloat32(0);
    if (Number.isNaN(x)) continue;
    const expected = ((state + 0x7fff + ((state >>> 16) & 1)) >>> 16) & 0xffff;
    assert.equal(hex(f32ToBf16Bits(x)), hex(expected), `bits 0x${state.toString(16)}`);
  }
});

const SAMPLES: Record<Datatype, unknown[]> = {
  BOOL: [true, false, true],
  UINT8: [0, 1, 255],
  UINT16: [0, 65535, 1234],
  UINT32: [0, 4294967295, 7],
  UINT64: [0, 2 ** 53 - 1, 2n ** 53n, 2n ** 64n - 1n],
  INT8: [-128, 127, 0],
  INT16: [-32768, 32767, -1],
  INT32: [-2147483648, 2147483647, -5],
  INT64: [-(2 ** 53 - 1), 2 ** 53 - 1, -(2n ** 63n), 2n ** 63n - 1n, -(2n ** 53n)],
  FP16: [0, -0, 1.5, 65504, -(2 ** -24), Infinity, NaN],
  BF16: [0, -0, 1.5, Math.PI, 2 ** -133, -Infinity, NaN],
  FP32: [0, -0, 0.1, 3.4028234663852886e38, 1.401298464324817e-45, Infinity, NaN],
  FP64: [0, -0, 0.1, Number.MAX_VALUE, Number.MIN_VALUE, -Infinity, NaN],
  BYTES: ["", "abc", "héllo wörld", "日本語", "🎉 emoji", "a\u0000b"],
};

Deno.test("every datatype round trips through tensorFromJson and tensorToJson", () => {
  for (const datatype of DATATYPES) {
    const values = SAMPLES[datatype];
    const data = tensorFromJson(datatype, values);
    if (datatype !== "BYTES") assert.equal(data.byteLength, byteSizeOf(datatype, [values.length]));
    let expected = values as JsonElement[];
    if (datatype === "FP16") expected = values.map((v) => f16BitsToF32(f32ToF16Bits(v as number)));
    if (datatype === "BF16") {
      expected = values.map((v) => bf16BitsToF32(f32ToBf16Bits(v as number)));
    }
    if (datatype === "FP32") expected = values.map((v) => Math.fround(v as number));
    assert.deepEqual(tensorToJson(datatype, data), expected, datatype);
    // Decoding and re-encoding reproduces the same bytes.
    assert.deepEqual(tensorFromJson(datatype, tensorToJson(datatype, data)), data, datatype);
  }
});

Deno.test("64-bit integers become numbers when safe and bigints beyond 2^53", () => {
  const out = tensorToJson(
    "INT64",
    tensorFromJson("INT64", [2 ** 53 - 1, 2n ** 53n, -(2n ** 53n)]),
  );
  assert.deepEqual(out, [2 ** 53 - 1, 2n ** 53n, -(2n ** 53n)]);
  assert.equal(typeof out[0], "number");
  const u = tensorToJson("UINT64", tensorFromJson("UINT64", ["18446744073709551615", " 42 "]));
  assert.deepEqual(u, [18446744073709551615n, 42]);
});

Deno.test("bytes are little-endian regardless of host", () => {
  assert.deepEqual([...tensorFromJson("UINT32", [0x01020304])], [4, 3, 2, 1]);
  assert.deepEqual([...tensorFromJson("INT16", [-2])], [0xfe, 0xff]);
  assert.deepEqual([...tensorFromJson("FP16", [1])], [0x00, 0x3c]);
  assert.deepEqual([...tensorFromJson("BF16", [1])], [0x80, 0x3f]);
  assert.deepEqual([...tensorFromJson("FP32", [1])], [0, 0, 0x80, 0x3f]);
  assert.deepEqual([...tensorFromJson("INT64", [-1])], new Array(8).fill(0xff));
  assert.deepEqual([...tensorFromJson("BOOL", [true, 0, 1, false])], [1, 0, 1, 0]);
});

Deno.test("tensorToJson reads views at odd byte offsets", () => {
  const backing = new Uint8Array(9);
  backing.set(tensorFromJson("FP64", [1.25]), 1);
  assert.deepEqual(tensorToJson("FP64", backing.subarray(1)), [1.25]);
});

Deno.test("BYTES elements keep empty and multi-byte UTF-8 strings", () => {
  const data = encodeBytesElements(["", "é", new Uint8Array([0xff, 0])]);
  assert.deepEqual([...data], [0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9, 2, 0, 0, 0, 0xff, 0]);
  assert.deepEqual(decodeBytesElements(data).map((e) => [...e]), [[], [0xc3, 0xa9], [0xff, 0]]);
  assert.deepEqual(tensorToJson("BYTES", data), ["", "é", "\ufffd\u0000"]);
  assert.deepEqual(tensorToJson("BYTES", new Uint8Array(0)), []);
});

Deno.test("decodeBytesElements rejects truncated data", () => {
  assert.throws(
    () => decodeBytesElements(new Uint8Array([1, 0, 0, 0, 9, 2, 0])),
    { name: "RangeError", message: "Truncated BYTES length prefix at byte 5 of 7" },
  );
  assert.throws(
    () => decodeBytesElements(new Uint8Array([5, 0, 0, 0, 1])),
    (e: unknown) => e instanceof RangeError && /element 0: length 5 at byte 0/.test(e.message),
  );
});

Deno.test("tensorFromJson errors name the element index and value", () => {
  const cases: [Datatype, unknown[], string, string][] = [
    ["UINT8", [1, 256], "RangeError", "Invalid UINT8 element 1: 256 is outside [0, 255]"],
    ["INT8", [-129], "RangeError", "Invalid INT8 element 0: -129 is outside [-128, 127]"],
    ["INT32", [0, 0, 1.5], "TypeError", "Invalid INT32 element 2: 1.5 is not an integer"],
    ["UINT32", ["x"], "TypeError", 'Invalid UINT32 element 0: "x" is not an integer'],
    ["UINT32", [-1], "RangeError", "Invalid UINT32 element 0: -1 is outside [0, 4294967295]"],
    [
      "UINT64",
      [2n ** 64n],
      "RangeError",
      "Invalid UINT64 element 0: 18446744073709551616n is outside [0, 18446744073709551615]",
    ],
    [
      "INT64",
      [0, "9223372036854775808"],
      "RangeError",
      'Invalid INT64 element 1: "9223372036854775808" is outside ' +
      "[-9223372036854775808, 9223372036854775807]",
    ],
    [
      "BOOL",
      [true, "yes"],
      "TypeError",
      'Invalid BOOL element 1: "yes" is not a boolean (true, false, 0 or 1)',
    ],
    ["BOOL", [2], "TypeError", "Invalid BOOL element 0: 2 is not a boolean (true, false, 0 or 1)"],
    ["BYTES", ["a", 5], "TypeError", "Invalid BYTES element 1: 5 is not a string"],
    ["FP32", [null], "TypeError", "Invalid FP32 element 0: null is not a number"],
    ["FP16", [""], "TypeError", 'Invalid FP16 element 0: "" is not a number'],
    ["FP64", [{ a: 1n }], "TypeError", 'Invalid FP64 element 0: {"a":"1n"} is not a number'],
  ];
  for (const [datatype, values, name, message] of cases) {
    assert.throws(() => tensorFromJson(datatype, values), { name, message }, datatype);
  }
  assert.throws(
    () => tensorFromJson("INT8", ["x".repeat(200)]),
    (e: unknown) => e instanceof TypeError && e.message.length < 120,
  );
});

Deno.test("float types accept the strings JSON uses for non-finite values", () => {
  const out = tensorToJson("FP32", tensorFromJson("FP32", ["NaN", "Infinity", "-Infinity", "2.5"]));
  assert.deepEqual(out, [NaN, Infinity, -Infinity, 2.5]);
});

Deno.test("tensorToJson rejects data that is not a whole number of elements", () => {
  assert.throws(() => tensorToJson("INT32", new Uint8Array(6)), {
    name: "RangeError",
    message: "INT32 data of 6 bytes is not a multiple of 4 bytes",
  });
});

Deno.test("byteSizeOf and integerRange", () => {
  assert.equal(byteSizeOf("FP32", [2, 3]), 24);
  assert.equal(byteSizeOf("INT64", []), 8);
  assert.throws(() => byteSizeOf("BYTES", [1]), TypeError);
  assert.deepEqual(integerRange("INT16"), [-32768n, 32767n]);
  assert.deepEqual(integerRange("UINT64"), [0n, 2n ** 64n - 1n]);
  assert.equal(integerRange("FP16"), undefined);
  assert.equal(integerRange("BOOL"), undefined);
});

// A bound only a conversion that is not linear could pass (a quadratic one takes hours at 10 MB):
// speed is the bench's to measure, and this suite runs beside other load (1.3 s seen at load 13).
Deno.test("10 MB tensors convert each way without a quadratic cost", () => {
  const bytes = 10 * 1024 * 1024;
  for (const datatype of ["FP32", "FP16", "INT64", "UINT8"] as const) {
    const data = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i += 2) data[i] = i & 0x3f; // finite FP16/FP32 patterns
    const t0 = performance.now();
    const values = tensorToJson(datatype, data);
    const t1 = performance.now();
    const back = tensorFromJson(datatype, values);
    const t2 = performance.now();
    assert.equal(back.byteLength, bytes);
    assert.ok(t1 - t0 < 10_000, `${datatype} tensorToJson took ${(t1 - t0).toFixed(0)} ms`);
    assert.ok(t2 - t1 < 10_000, `${datatype} tensorFromJson took ${(t2 - t1).toFixed(0)} ms`);
  }
});
