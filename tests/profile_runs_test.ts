/**
 * --num-profile-runs against the reference server: a model whose compute
 * time is normal (10 +- 2 ms) repeated three times, each headline figure as
 * the mean of the runs with its Student's t interval in the console, the
 * summary JSON (valid against its schema), the CSV and the HTML report; the
 * adaptive mode stopping once converged; an LLM run; the usage errors.
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { parseCsv, runCli } from "./_helpers.ts";
import { chromium, renderedDom, withoutScripts } from "./_chromium.ts";

type Json = Record<string, unknown>;
interface Interval {
  n: number;
  mean: number;
  std: number;
  ci_low: number;
  ci_high: number;
  t_critical: number;
  values: number[];
}

const NOISY: ModelConfig = {
  name: "noisy",
  kind: "identity",
  compute_ms: { dist: "normal", mean_ms: 10, stddev_ms: 2, min_ms: 2 },
  instances: 1,
  inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
};

Deno.test("--num-profile-runs 3: every output gives each figure's mean and interval", async () => {
  const server = await startServerInWorker({ models: [NOISY] });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_runs_" });
  try {
    const r = await runCli([
      ...["-m", "noisy", "-u", server.addr, "--concurrency-range", "1", "-p", "400", "-s", "50"],
      ...["--num-profile-runs", "3", "--summary-json", `${dir}/s.json`, "-f", `${dir}/c.csv`],
      ...["--report-html", `${dir}/r.html`],
    ], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    for (const k of [1, 2, 3]) assert.match(r.stdout, new RegExp(`Profile run ${k} of 3`));
    assert.match(r.stdout, /Confidence over 3 of 3 profile runs \(95 % intervals, Student's t\)/);
    assert.match(r.stdout, /Avg latency: +\d+\.\d+ ms ± \d+\.\d+ \(\d+\.\d+ \.\. \d+\.\d+\), CV/);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
    const runs = summary.profile_runs as Json;
    assert.equal(runs.completed, 3);
    const [level] = runs.levels as Array<{ value: number; figures: Record<string, Interval> }>;
    assert.equal(level.value, 1);
    const latency = level.figures["client.avg_latency_us"];
    assert.equal(latency.n, 3);
    assert.equal(latency.values.length, 3);
    const mean = latency.values.reduce((a, b) => a + b, 0) / 3;
    assert.ok(Math.abs(latency.mean - mean) < 1e-6);
    // t(0.975, 2), and the interval it gives.
    assert.ok(Math.abs(latency.t_critical - 4.302653) < 1e-5);
    const half = latency.t_critical * latency.std / Math.sqrt(3);
    assert.ok(Math.abs(latency.ci_high - latency.mean - half) < 1e-6);
    assert.ok(latency.ci_low < latency.mean && latency.mean < latency.ci_high);
    // The server's noise: 10 ms of compute on average, plus the overheads of a loaded machine.
    assert.ok(latency.mean > 9_500 && latency.mean < 14_000, `mean ${latency.mean} us`);
    assert.ok(
      level.figures["client.percentiles_us.99"].mean >
        level.figures["client.percentiles_us.50"].mean,
    );
    const throughput = level.figures["client.throughput"];
    assert.ok(throughput.mean > 60 && throughput.mean < 105, `throughput ${throughput.mean}`);
    // The last run's levels, as a single run writes them.
    assert.equal(summary.levels.length, 1);
    assert.equal(summary.levels[0].client.throughput, throughput.values[2]);
    const [head, ...rows] = parseCsv(await Deno.readTextFile(`${dir}/c.csv`));
    assert.deepEqual(head.slice(0, 5), ["Concurrency", "Metric", "Unit", "Runs", "Mean"]);
    const csvLatency = rows.find((row) => row[1] === "Avg latency")!;
    assert.equal(csvLatency[2], "ms");
    assert.ok(Math.abs(Number(csvLatency[4]) - latency.mean / 1000) < 1e-9);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    assert.match(html, /Profile runs: 95 % confidence intervals/);
    assert.match(html, /"ci":\{"throughput":\[/);
    if (!("reason" in chromium)) {
      const dom = withoutScripts(await renderedDom(html));
      assert.match(dom, /data-rendered="true"/);
      assert.equal(dom.match(/<g[^>]*data-error-bar/g)?.length, 1, "one level, one error bar");
    }
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--convergence-threshold: stops after three runs once every interval is narrow enough", async () => {
  const server = await startServerInWorker({ models: [NOISY] });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_runs_" });
  try {
    const r = await runCli([
      ...["-m", "noisy", "-u", server.addr, "--concurrency-range", "2", "-p", "400", "-s", "50"],
      ...["--num-profile-runs", "6", "--convergence-threshold", "5", "-r", "20"],
      ...["--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.doesNotMatch(r.stdout, /Profile run 4 of 6/);
    assert.match(r.stdout, /Confidence over 3 of 6 profile runs/);
    assert.match(r.stdout, /Converged: every interval spans at most 500 % of its mean/);
    const runs = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).profile_runs;
    assert.deepEqual([runs.completed, runs.converged, runs.convergence_threshold], [3, true, 5]);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--num-profile-runs on an OpenAI-compatible LLM: the token figures get intervals", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", instances: 4, llm: { ttft_ms: 20, itl_ms: 2, output_tokens: 8 } }],
  });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_runs_" });
  try {
    const r = await runCli([
      ...["-m", "llm", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", server.addr, "--streaming", "--concurrency-range", "2", "--request-count", "16"],
      ...["--num-profile-runs", "2", "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Time to first token avg: +\d+\.\d+ ms ±/);
    const figures = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).profile_runs.levels[0]
      .figures as Record<string, Interval>;
    const ttft = figures["llm.time_to_first_token_ms.avg"];
    assert.equal(ttft.n, 2);
    assert.ok(ttft.mean >= 19 && ttft.mean < 60, `TTFT ${ttft.mean} ms`);
    assert.ok(figures["llm.output_token_throughput_tokens_per_sec"].mean > 0);
    assert.ok(figures["llm.inter_token_latency_ms.p99"] !== undefined);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repeat-run options: each problem is one line before anything runs", async () => {
  const r = await runCli([
    ...["-m", "slow", "-u", "127.0.0.1:1", "--confidence-level", "1.5", "--num-profile-runs", "2"],
    ...["--profile-export-file", "/tmp/never_written_inferperf.json"],
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /Invalid value "1.5" for --confidence-level: expected a number between 0 and 1/,
  );
  assert.match(r.stderr, /--num-profile-runs can not be used with --profile-export-file/);
  const alone = await runCli(["-m", "slow", "-u", "127.0.0.1:1", "--convergence-threshold", "0.1"]);
  assert.equal(alone.code, 1);
  assert.match(alone.stderr, /--convergence-threshold needs --num-profile-runs N with N >= 2/);
});
