import assert from "node:assert/strict";
import { formatGeneral, printableLine, wholeUs } from "./format.ts";

Deno.test("formatGeneral writes doubles like a default C++ ostream", () => {
  const cases: Array<[number, string]> = [
    [69.6, "69.6"],
    [83, "83"],
    [89.8, "89.8"],
    [348 / 5, "69.6"],
    [2.8332441, "2.83324"],
    [19.88744, "19.8874"],
    [0.833305, "0.833305"],
    [123456, "123456"],
    [1234567, "1.23457e+06"],
    [1e6, "1e+06"],
    [999999.4, "999999"],
    [0.0001, "0.0001"],
    [0.00001234, "1.234e-05"],
    [1e-5, "1e-05"],
    [1.5e21, "1.5e+21"],
    [0.5, "0.5"],
    [0, "0"],
    [-69.6, "-69.6"],
    [Number.NaN, "nan"],
    [Infinity, "inf"],
  ];
  for (const [value, text] of cases) assert.equal(formatGeneral(value), text, String(value));
});

Deno.test("formatGeneral rounds exact ties to even like glibc", () => {
  assert.equal(formatGeneral(100.0625), "100.062");
  assert.equal(formatGeneral(100.1875), "100.188");
  assert.equal(formatGeneral(999999.5), "1e+06");
  assert.equal(formatGeneral(2.5), "2.5");
});

Deno.test("wholeUs truncates, forgiving float noise just under an integer", () => {
  assert.equal(wholeUs(1.005 * 1000), 1005); // 1004.9999999999999
  assert.equal(wholeUs(5.7), 5);
  assert.equal(wholeUs(-0.3), 0);
  assert.equal(Object.is(wholeUs(-0.3), -0), false);
});

Deno.test("server text is printed as one line without terminal control characters", () => {
  assert.equal(
    printableLine("model \x1b[2J\x1b[31mgone\r\n  next\tline\x00\x9b"),
    "model \\x1b[2J\\x1b[31mgone next\tline\\x00\\x9b",
  );
  assert.equal(printableLine("plain: 'ok' é ✓"), "plain: 'ok' é ✓");
});
