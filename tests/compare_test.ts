/**
 * `inferperf compare` on real runs of the reference server: a run against
 * itself is no significant difference; against the same model made 20 %
 * slower (12 ms instead of 10 ms per request) it is worse, throughput and
 * latency at the ratio Little's law gives; --fail-on-regression sets exit
 * code 5; --html draws both curves (headless Chromium).
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { runCli } from "./_helpers.ts";
import { chartMarks, chromium, renderedDom } from "./_chromium.ts";

const slow = (computeMs: number): ModelConfig => ({
  name: "slow",
  kind: "identity",
  compute_ms: computeMs,
  instances: 1,
  inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
});

/** A summary JSON of the slow model at concurrency 2 and 4 on a server where it takes `computeMs`. */
async function measure(computeMs: number, path: string): Promise<void> {
  const server = await startServerInWorker({ models: [slow(computeMs)] });
  try {
    const r = await runCli([
      ...["-m", "slow", "-u", server.addr, "--concurrency-range", "2:4:2", "-p", "1000"],
      ...["-s", "30", "-r", "20", "--summary-json", path],
    ], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
  } finally {
    await server.close();
  }
}

Deno.test("compare: itself is no difference, 20 % slower is worse by 20 %", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_compare_" });
  try {
    await measure(10, `${dir}/base.json`);
    await measure(12, `${dir}/slower.json`);
    const same = await runCli(["compare", `${dir}/base.json`, `${dir}/base.json`]);
    assert.equal(same.code, 0, same.stderr);
    const rows = same.stdout.split("\n").filter((l) => /\(ms\)|\(infer\/sec\)/.test(l));
    assert.equal(rows.length, 12, same.stdout);
    for (const row of rows) assert.match(row, /1\.000 .* p=1 .* ~$/);

    const worse = await runCli([
      ...["compare", `${dir}/base.json`, `${dir}/slower.json`, "--html", `${dir}/c.html`],
      ...["--fail-on-regression", "10"],
    ]);
    assert.equal(worse.code, 5, worse.stderr + worse.stdout);
    const at4 = worse.stdout.slice(worse.stdout.indexOf("Concurrency 4"));
    const row = (label: string) => at4.split("\n").find((l) => l.trim().startsWith(label))!;
    const ratio = (label: string) => Number(/ (\d\.\d{3}) /.exec(row(label))![1]);
    // Little's law on one instance: 4 in flight take 4 x 12 instead of 4 x 10 ms. The latency
    // is the queue's, steady on a loaded machine; throughput windows vary more, so its test
    // may lack the power to call it (never "better").
    for (const label of ["Avg latency", "p50 latency"]) {
      assert.match(row(label), /worse$/, row(label));
      assert.ok(Math.abs(ratio(label) - 1.2) < 0.06, `${label} ratio ${ratio(label)}`);
    }
    assert.doesNotMatch(row("Throughput"), /better$/);
    assert.ok(Math.abs(ratio("Throughput") - 10 / 12) < 0.08, row("Throughput"));
    assert.match(
      worse.stderr,
      /error: Avg latency at concurrency 4 regressed by \d+\.\d % \(beyond --fail-on-regression 10 %\)/,
    );
    // No difference is no regression, whatever the bound.
    const lax = await runCli([
      ...["compare", `${dir}/base.json`, `${dir}/base.json`, "--fail-on-regression", "0"],
    ]);
    assert.equal(lax.code, 0, lax.stderr);
    if (!("reason" in chromium)) {
      const dom = await renderedDom(await Deno.readTextFile(`${dir}/c.html`));
      assert.match(dom, /data-rendered="true"/);
      const marks = Object.fromEntries(chartMarks(dom));
      assert.deepEqual(marks["compare-avg"], { points: 4, bars: 0 }, "two levels of each run");
      assert.deepEqual(marks["compare-tail"], { points: 4, bars: 0 });
      assert.match(dom, /data-verdict="worse"/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare: its usage errors are one line each", async () => {
  const one = await runCli(["compare", "only.json"]);
  assert.equal(one.code, 1);
  assert.match(one.stderr, /error: Give two summary JSONs to compare/);
  const dir = await Deno.makeTempDir({ prefix: "inferperf_compare_" });
  try {
    await Deno.writeTextFile(`${dir}/e.json`, JSON.stringify({ experiments: [] }));
    const exported = await runCli(["compare", `${dir}/e.json`, `${dir}/e.json`]);
    assert.equal(exported.code, 1);
    assert.match(exported.stderr, /is a profile export: inferperf compare reads summary JSONs/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
