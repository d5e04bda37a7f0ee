/**
 * AIPerf's load options end to end, against the reference server and the
 * real llama.cpp server (tests/_llama.ts): a request rate with a cap on the
 * requests in flight.
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
 * longer than 2 / 40 s: never more than 2 in flight, and the sends that
 * waited for the cap counted.
 */
async function cappedRun(addr: string, model: string, count: number) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_cap_" });
  try {
    const r = await runCli([
      ...["-m", model, "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
      ...["--output-tokens-mean", "8", "--output-tokens-mean-deterministic"],
      ...["--request-rate", "40", "--concurrency", "2", "--request-count", String(count)],
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
    const { level, maxInFlight, stdout } = await cappedRun(server.addr, "llm", 16);
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
      const { level, maxInFlight } = await cappedRun(server.addr, "tiny", 12);
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
