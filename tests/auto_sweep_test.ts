/**
 * --sweep-size (GuideLLM's sweep profile) against the reference server: the
 * synchronous and throughput levels bound the rates, which lie evenly
 * between them; every output names the levels by strategy; on a model that
 * thrashes behind a long queue (the throughput level's 4 in flight never
 * make one), the Poisson rate at its capacity collapses and is found
 * over-saturated.
 */
import assert from "node:assert/strict";
import { DEFAULT_MODELS, type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { parseCsv, runCli } from "./_helpers.ts";
import { chartMarks, chromium, renderedDom } from "./_chromium.ts";

/** One 10 ms instance. */
const SLOW = DEFAULT_MODELS.find((m) => m.name === "slow")!;

/** The same model thrashing behind a queue of more than 5: 20 ms per request, half the rate. */
const THRASHING: ModelConfig = { ...SLOW, faults: { overload: { queue: 5, extra_ms: 10 } } };

type Level = {
  mode: string;
  value: number;
  strategy: string;
  client: { throughput: number };
  over_saturation?: { inflight_per_s: number; latency_ms_per_s: number };
};

async function sweep(args: string[], options: { dir: string; model: ModelConfig }) {
  const dir = options.dir;
  const server = await startServerInWorker({ models: [options.model] });
  try {
    const r = await runCli([
      ...["-m", "slow", "-u", server.addr, "-p", "800"],
      ...[
        "--summary-json",
        `${dir}/s.json`,
        "-f",
        `${dir}/c.csv`,
        "--report-html",
        `${dir}/r.html`,
      ],
      ...args,
    ], { timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
    return { r, summary, levels: summary.levels as Level[] };
  } finally {
    await server.close();
  }
}

Deno.test("--sweep-size 5: synchronous, throughput, then rates evenly up to the throughput rate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_autosweep_" });
  try {
    const { r, levels } = await sweep(
      ["--sweep-size", "5", "-s", "30", "--sweep-max-concurrency", "8"],
      { dir, model: SLOW },
    );
    const [sync, thr, ...rates] = levels;
    assert.deepEqual([sync.strategy, sync.mode, sync.value], ["synchronous", "concurrency", 1]);
    assert.deepEqual([thr.strategy, thr.mode, thr.value], ["throughput@8", "concurrency", 8]);
    // One 10 ms instance: ~100 requests/s at most; one at a time loses the client's time.
    assert.ok(
      thr.client.throughput > 70 && thr.client.throughput < 105,
      `${thr.client.throughput}`,
    );
    assert.ok(sync.client.throughput < thr.client.throughput * 1.02);
    assert.ok(rates.length >= 1 && rates.length <= 3, `${rates.length} rates`);
    const low = sync.client.throughput;
    const high = thr.client.throughput;
    const step = (high - low) / 3;
    rates.forEach((rate, i) => {
      assert.equal(rate.mode, "request_rate");
      assert.equal(rate.strategy, `constant@${rate.value}`);
      assert.ok(Math.abs(rate.value - (low + step * (i + 1))) < 0.011, `rate ${i}: ${rate.value}`);
      assert.ok(rate.value > low && rate.value <= high + 0.01);
    });
    assert.match(r.stdout, /\*\*\* Sweep 1 of 5: synchronous \*\*\*/);
    assert.match(r.stdout, /\*\*\* Sweep: \d levels \*\*\*/);
    const [head, ...rows] = parseCsv(await Deno.readTextFile(`${dir}/c.csv`));
    assert.equal(head[0], "Strategy");
    assert.deepEqual(
      rows.map((row) => row[0]).sort(),
      levels.map((l) => l.strategy).sort(),
    );
    if (!("reason" in chromium)) {
      const dom = await renderedDom(await Deno.readTextFile(`${dir}/r.html`));
      assert.match(dom, /data-rendered="true"/);
      assert.equal(chartMarks(dom).get("throughput-latency")?.points, levels.length);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--sweep-size: a thrashing model's capacity rate is over-saturated and ends the sweep", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_autosweep_" });
  try {
    const { r, summary, levels } = await sweep(
      [
        ...["--sweep-size", "3", "--request-distribution", "poisson", "-r", "12"],
        ...["--sweep-max-concurrency", "4", "-s", "10"],
      ],
      { dir, model: THRASHING },
    );
    assert.equal(levels.length, 3);
    const top = levels[2];
    assert.match(top.strategy, /^poisson@/);
    assert.ok(top.over_saturation, JSON.stringify(top));
    assert.ok(top.over_saturation.inflight_per_s > 0 && top.over_saturation.latency_ms_per_s > 0);
    assert.match(summary.note, /^Over-saturated at request rate [\d.]+: over its \d+ windows/);
    assert.match(r.stdout, /\(over-saturated\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--sweep-size: the options that choose levels are refused, one line each", async () => {
  const r = await runCli([
    ...["-m", "slow", "-u", "127.0.0.1:1", "--sweep-size", "4", "--concurrency-range", "1:4"],
    ...["--request-distribution", "gamma"],
  ]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--sweep-size can not be used with --concurrency-range/);
  assert.match(r.stderr, /--sweep-size takes --request-distribution constant or poisson/);
});
