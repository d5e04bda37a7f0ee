import assert from "node:assert/strict";
import { parsePrometheusText, PrometheusSyntaxError } from "./prometheus.ts";

Deno.test("samples with labels, comments, timestamps and special values", () => {
  const text = [
    "# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)",
    "# TYPE nv_gpu_utilization gauge",
    'nv_gpu_utilization{gpu_uuid="GPU-a"} 0.25',
    'nv_gpu_utilization{gpu_uuid="GPU-b",} 5e-1 1700000000123',
    "# a free comment",
    "",
    "   ",
    "process_up 1",
    'odd_values{kind="nan"} NaN',
    'odd_values{kind="inf"} +Inf',
    'odd_values{kind="-inf"}\t-Inf',
    "windows_line_end 3\r",
    'spaced { a = "1" , b="2" } 4',
  ].join("\n");
  const samples = parsePrometheusText(text);
  assert.deepEqual(samples.slice(0, 3), [
    { name: "nv_gpu_utilization", labels: { gpu_uuid: "GPU-a" }, value: 0.25 },
    {
      name: "nv_gpu_utilization",
      labels: { gpu_uuid: "GPU-b" },
      value: 0.5,
      timestampMs: 1700000000123,
    },
    { name: "process_up", labels: {}, value: 1 },
  ]);
  assert.ok(Number.isNaN(samples[3].value));
  assert.equal(samples[4].value, Infinity);
  assert.equal(samples[5].value, -Infinity);
  assert.equal(samples[6].value, 3);
  assert.deepEqual(samples[7], { name: "spaced", labels: { a: "1", b: "2" }, value: 4 });
});

Deno.test("label values unescape backslash, quote and newline", () => {
  const [sample] = parsePrometheusText(
    String.raw`m{path="C:\\dir",quote="say \"hi\"",multi="a\nb",comma="x,y}",other="\t"} -1.5e3`,
  );
  assert.deepEqual(sample.labels, {
    path: "C:\\dir",
    quote: 'say "hi"',
    multi: "a\nb",
    comma: "x,y}",
    other: "\\t",
  });
  assert.equal(sample.value, -1500);
});

Deno.test("malformed lines name the line", () => {
  const cases: Array<[string, RegExp]> = [
    ["ok 1\nbad{x=1} 2", /line 2: expected a quoted label value/],
    ['m{x="1" 2', /line 1: expected "}"/],
    ['m{x="1', /unterminated label value/],
    ["m", /missing value of "m"/],
    ["m abc", /invalid value "abc"/],
    ["m 1 1.5", /invalid timestamp "1.5"/],
    ["m 1 2 3", /unexpected text after the sample/],
    ["9m 1", /expected a metric name/],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parsePrometheusText(text), (e: unknown) => {
      assert.ok(e instanceof PrometheusSyntaxError);
      assert.match(e.message, message);
      return true;
    });
  }
});
