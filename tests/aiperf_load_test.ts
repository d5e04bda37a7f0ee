/**
 * AIPerf's load options end to end, against the reference server and the
 * real llama.cpp server (tests/_llama.ts): a request rate with a cap on the
 * requests in flight; request cancellation; a benchmark duration with a
 * grace period; several models in one run.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { llama, startLlama } from "./_llama.ts";
import { runCli } from "./_helpers.ts";

const skipLlama = "reason" in llama;
if ("reason" in llama) console.log(`aiperf_load_test: llama.cpp tests skipped: ${llama.reason}`);

type Json = Record<string, unknown>;

/** The most requests of an export in flight at once (from each send to its last response). */
function maxInFlight(path: string): number {
  const requests = parseProfileExport(Deno.readTextFileSync(path)).experiments[0].requests;
  const edges = requests.flatMap((r) => [
    { at: r.timestamp, delta: 1 },
    { at: r.response_timestamps.at(-1)!, delta: -1 },
  ]).sort((a, b) => a.at === b.at ? a.delta - b.delta : a.at < b.at ? -1 : 1);
  let now = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, now += e.delta);
  return max;
}

/**
 * --request-rate 40 --concurrency 2 (AIPerf's spelling; perf_analyzer's
 * abbreviations of its range options) over `count` requests that take
 * longer than 2 / 40 s (`tokens` each): never more than 2 in flight, and the sends that
 * waited for the cap counted.
 */
async function cappedRun(addr: string, model: string, options: { count: number; tokens: number }) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_cap_" });
  try {
    const r = await runCli([
      ...["-m", model, "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
      ...["--output-tokens-mean", String(options.tokens), "--output-tokens-mean-deterministic"],
      ...["--request-rate", "40", "--concurrency", "2", "--request-count", String(options.count)],
      ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const level = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0];
    return { level, maxInFlight: maxInFlight(`${dir}/e.json`), stdout: r.stdout };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("--request-rate with --concurrency: the reference server never sees more than the cap", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 20, itl_ms: 10, output_tokens: 8 } }],
  });
  try {
    // Each request takes ~90 ms: 2 in flight serve ~22/s, below the 40/s asked for.
    const { level, maxInFlight, stdout } = await cappedRun(server.addr, "llm", {
      count: 16,
      tokens: 8,
    });
    assert.equal(maxInFlight, 2);
    const open = level.open_loop as Json;
    assert.equal(open.send_count, 16);
    assert.ok((open.blocked_count as number) >= 8, `blocked ${open.blocked_count}`);
    assert.match(stdout, /Sends held back by the in-flight limit: \d+/);
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "llama.cpp: --request-rate with --concurrency keeps at most the cap in flight",
  ignore: skipLlama,
  async fn() {
    const server = await startLlama();
    try {
      const before = await server.counts();
      const { level, maxInFlight } = await cappedRun(server.addr, "tiny", {
        count: 12,
        tokens: 128,
      });
      assert.ok(maxInFlight <= 2, `${maxInFlight} in flight`);
      const open = level.open_loop as Json;
      assert.equal(open.send_count, 12);
      assert.ok((open.blocked_count as number) > 0, "the cap held sends back");
      const after = await server.counts();
      assert.equal(after.requests - before.requests, 12, "the server finished every request");
    } finally {
      await server.stop();
    }
  },
});

/**
 * 20 requests of `tokens` streamed tokens, 2 in flight, half of them drawn
 * for cancellation 50 ms after their send (long before their answer ends).
 */
async function cancellingRun(addr: string, model: string, tokens: number) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_cancel_" });
  try {
    const r = await runCli([
      ...["-m", model, "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
      ...["--output-tokens-mean", String(tokens), "--output-tokens-mean-deterministic"],
      ...["--concurrency-range", "2", "--request-count", "20"],
      ...["--request-cancellation-rate", "50", "--request-cancellation-delay", "0.05"],
      ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`],
      ...["--llm-csv", `${dir}/r.csv`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const level = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0];
    const client = level.client as Json;
    const exported = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests;
    const csv = await Deno.readTextFile(`${dir}/r.csv`);
    return { client, llm: level.llm as Json, exported, stdout: r.stdout, csv };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What the run's client summary says of the 20 requests: valid + cancelled, no failure. */
function checkCancelled(
  run: Awaited<ReturnType<typeof cancellingRun>>,
  minLatencyMs: number,
): number {
  const { client, exported, stdout } = run;
  const cancelled = client.cancelled_count as number;
  assert.equal(client.error_count, 0);
  assert.equal((client.request_count as number) + cancelled, 20);
  // The seeded draw: about half, the same every run.
  assert.ok(cancelled >= 5 && cancelled <= 15, `${cancelled} cancelled`);
  assert.match(stdout, new RegExp(`Cancelled requests: ${cancelled}\\n`));
  assert.match(run.csv, new RegExp(`\\nCancelled Request Count \\(count\\),${cancelled}.00\\n`));
  // Latency statistics are the valid requests' alone: none was cut short at 50 ms.
  assert.equal(exported.length, 20 - cancelled);
  const minUs = Math.min(
    ...exported.map((r) => Number(r.response_timestamps.at(-1)! - r.timestamp) / 1000),
  );
  assert.ok(minUs >= minLatencyMs * 1000, `${minUs} us`);
  return cancelled;
}

Deno.test("--request-cancellation-rate: the reference server's cancelled requests are counted apart", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 20, itl_ms: 5, output_tokens: 32 } }],
  });
  try {
    // Each answer takes 20 + 31 x 5 = 175 ms.
    checkCancelled(await cancellingRun(server.addr, "llm", 32), 170);
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "llama.cpp: cancelled requests stop the server's generation and are counted apart",
  ignore: skipLlama,
  async fn() {
    const server = await startLlama();
    try {
      const before = await server.counts();
      const run = await cancellingRun(server.addr, "tiny", 400);
      const cancelled = checkCancelled(run, 50);
      // Wait for the server to notice the last closed connections.
      await new Promise((r) => setTimeout(r, 500));
      const after = await server.counts();
      const generated = after.tokens - before.tokens;
      const valid = 20 - cancelled;
      // The valid requests' 400 tokens each, and less than that of each cancelled one.
      assert.ok(generated >= valid * 400, `${generated} tokens`);
      assert.ok(generated < 20 * 400, `${generated} tokens: the cancelled answers were cut short`);
    } finally {
      await server.stop();
    }
  },
});

/** A run measured for `durationS` seconds with a grace period of `graceS`. */
async function timedRun(addr: string, options: { model: string; load: string[]; tokens: number }) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_duration_" });
  try {
    const startMs = performance.now();
    const r = await runCli([
      ...["-m", options.model, "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
      ...["--output-tokens-mean", String(options.tokens), "--output-tokens-mean-deterministic"],
      ...options.load,
      ...["--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 60_000 });
    const tookMs = performance.now() - startMs;
    assert.equal(r.code, 0, r.stderr);
    const level = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0];
    return { level, client: level.client as Json, tookMs, stdout: r.stdout };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("--benchmark-duration: one window of sends, the grace period, then the rest cancelled", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 100, itl_ms: 10, output_tokens: 41 } }],
  });
  try {
    // 20 sends over 1 s, each answered after 500 ms; the grace period (0.2 s) lets the ones sent
    // before 0.7 s finish and cancels the others.
    const { level, client, stdout } = await timedRun(server.addr, {
      model: "llm",
      tokens: 41,
      load: [
        "--request-rate",
        "20",
        "--benchmark-duration",
        "1",
        "--benchmark-grace-period",
        "0.2",
      ],
    });
    const sent = (level.open_loop as Json).send_count as number;
    assert.ok(sent >= 19 && sent <= 21, `${sent} sent`);
    const cancelled = client.cancelled_count as number;
    assert.equal(client.error_count, 0);
    assert.equal((client.request_count as number) + cancelled, sent);
    assert.ok(cancelled >= 4 && cancelled <= 8, `${cancelled} cancelled`);
    assert.equal(level.stable, true);
    assert.match(stdout, /Cancelled requests: \d+/);
    // The window spans the duration and the grace period.
    const durationMs = client.duration_ms as number;
    assert.ok(durationMs >= 1150 && durationMs < 1600, `${durationMs} ms`);
  } finally {
    await server.close();
  }
});

Deno.test({
  name:
    "llama.cpp: --benchmark-duration ends the level on time and cancels what the grace period leaves",
  ignore: skipLlama,
  async fn() {
    const TOKENS = 150;
    const server = await startLlama();
    try {
      const before = await server.counts();
      const { client, tookMs } = await timedRun(server.addr, {
        model: "tiny",
        tokens: TOKENS,
        load: [
          "--concurrency",
          "2",
          "--benchmark-duration",
          "2",
          "--benchmark-grace-period",
          "0",
        ],
      });
      // Answers of 150 tokens take a fifth of a second on an idle host and four times that on a
      // busy CI host (its tokens/s halve and more within a run): some end within the duration,
      // and the two in flight at its end are cancelled.
      const valid = client.request_count as number;
      assert.ok(valid >= 1, `${valid} valid`);
      assert.equal(client.cancelled_count, 2);
      assert.equal(client.error_count, 0);
      assert.ok(tookMs < 10_000, `${tookMs} ms`);
      await new Promise((r) => setTimeout(r, 500));
      const after = await server.counts();
      const generated = after.tokens - before.tokens;
      assert.ok(generated >= valid * TOKENS, `${generated} tokens`);
      assert.ok(
        generated < (valid + 2) * TOKENS,
        `${generated} tokens: the cancelled were cut short`,
      );
    } finally {
      await server.stop();
    }
  },
});

/** 12 requests, 2 in flight, to the models of `models` (-m A,B), with the export. */
async function twoModelRun(addr: string, models: string, strategy: string) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_models_" });
  try {
    const r = await runCli([
      ...["-m", models, "--model-selection-strategy", strategy],
      ...["--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
      ...["--output-tokens-mean", "8", "--output-tokens-mean-deterministic"],
      ...["--concurrency-range", "2", "--request-count", "12", "--llm-csv", `${dir}/r.csv`],
      ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const llm = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0].llm as Json;
    const sentTo = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests.map((q) => (q.request_inputs as Json).payload as string)
      .map((payload) => JSON.parse(payload).model as string);
    return { llm, sentTo, stdout: r.stdout, csv: await Deno.readTextFile(`${dir}/r.csv`) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("-m a,b: requests to both models in turn, every metric per model too", async () => {
  const server = await startServerInWorker({
    models: [
      { name: "fast", llm: { ttft_ms: 5, itl_ms: 1, output_tokens: 8 } },
      { name: "slow", llm: { ttft_ms: 60, itl_ms: 1, output_tokens: 8 } },
    ],
  });
  try {
    const { llm, sentTo, stdout, csv } = await twoModelRun(
      server.addr,
      "fast,slow",
      "round_robin",
    );
    // genai-perf's CSV gains a block of rows per model.
    assert.match(csv, /\nModel,fast\nMetric,avg,/);
    assert.match(csv, /\nModel,slow\nMetric,avg,/);
    assert.equal(sentTo.filter((m) => m === "fast").length, 6);
    assert.equal(sentTo.filter((m) => m === "slow").length, 6);
    const models = llm.models as Record<string, Json>;
    assert.deepEqual(Object.keys(models).sort(), ["fast", "slow"]);
    assert.equal(models.fast.request_count, 6);
    assert.equal(models.slow.request_count, 6);
    const ttft = (m: string) => (models[m].time_to_first_token_ms as Json).avg as number;
    assert.ok(ttft("fast") < 30 && ttft("slow") >= 55, `${ttft("fast")} / ${ttft("slow")} ms`);
    assert.match(stdout, /Model fast: 6 requests; /);
    // Random selection: seeded, both models drawn, 12 requests in all.
    const random = await twoModelRun(server.addr, "fast,slow", "random");
    assert.equal(random.sentTo.length, 12);
    assert.ok(new Set(random.sentTo).size === 2, random.sentTo.join(","));
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "llama.cpp: -m a,b sends both names; llama.cpp serves its one model under either",
  ignore: skipLlama,
  async fn() {
    const server = await startLlama();
    try {
      const before = await server.counts();
      const { llm, sentTo } = await twoModelRun(server.addr, "tiny,other", "round_robin");
      assert.deepEqual([...new Set(sentTo)].sort(), ["other", "tiny"]);
      const models = llm.models as Record<string, Json>;
      assert.equal(models.tiny.request_count, 6);
      assert.equal(models.other.request_count, 6);
      const after = await server.counts();
      assert.equal(after.requests - before.requests, 12);
      assert.equal(after.tokens - before.tokens, 12 * 8);
    } finally {
      await server.stop();
    }
  },
});
