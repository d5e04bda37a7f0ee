/**
 * Engine search on the real llama.cpp server of ../shared/llama (tests/_llama.ts):
 * `-np` 1, 2, 4 x concurrency 1, 2, 4, 8 with a TTFT p90 constraint and the
 * llama.cpp preset (its readiness check and slot erase between points).
 * Each point is 96 requests of 32 tokens (--request-count: the server's
 * counter is scraped at the level's ends, so its generated tokens equal the
 * client's exactly), and each verdict follows the point's TTFT p90.
 * Then the ground truth: plain `profile` runs of each setting at the loads the
 * search measured, each setting on a fresh llama-server and its slots erased
 * before every point but the first (as the search does, so that no run is
 * served from the prefix cache of the one before), must measure what the
 * search measured (no bias from how it runs the engine) and rank the settings
 * by the search's objective as the search did where this run's own repeat
 * error can tell them apart.
 */
import assert from "node:assert/strict";
import { interpolatedPercentile } from "../lib/measure/stats.ts";
import { parseCsv, runCli } from "./_helpers.ts";
import { llama, LLAMA_DIR, startLlama } from "./_llama.ts";

const skip = "reason" in llama;
if ("reason" in llama) console.log(`engine_llama_test: skipped: ${llama.reason}`);

const PERMISSIONS = [
  ...["--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-run=sh,cat"],
];
const TTFT_P90_MS = 60;
const LOADS = [1, 2, 4, 8];
// The same point measured twice (the search's, then a plain run) on this shared 2-core machine came
// out up to 42 % apart in output tokens/s alone and 61 % apart in a full CI run (250 against 535
// tokens/s; the host's speed drifts within a run), and one point's TTFT p90 ranged from 41 to 71 ms
// over four runs; on the tiny model one decode thread serves about the same tokens/s whatever -np.
// So two settings are ranked only where both measurements put them further apart than the largest
// repeat error of this run's points (and at least 20 %), and a verdict on a TTFT p90 within 30 % of
// the bound in either is not asserted (10 % and 15 % would fail about one run in ten). A bias of the
// search's measurements shows in the median of its ratios to the plain runs' (0.88 to 1.13 over
// four runs, each point's ranging from 0.39 to 1.47).
const TIE = 0.2;
const NEAR_BOUND = 0.3;
const MEDIAN_RATIO = [2 / 3, 1.5];
const CLIENT = {
  "model-name": "tiny",
  streaming: true,
  "request-count": 96,
  "warmup-request-count": 4,
  "synthetic-input-tokens-mean": 64,
  "output-tokens-mean": 32,
  "output-tokens-mean-deterministic": true,
};

Deno.test({
  name:
    "llama.cpp: -np x concurrency under a TTFT p90 bound; the server counts what the client does; plain runs measure and rank alike",
  ignore: skip,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "inferperf_engine_llama_" });
    try {
      const config = {
        ...CLIENT,
        "concurrency-range": LOADS,
        engine: {
          preset: "llama.cpp",
          command:
            `${LLAMA_DIR}/bin/llama-server -m {model} --host {host} --port {port} --metrics -t 1 -c 8192`,
          clear_cache: true,
        },
        engine_parameters: { model: [`${LLAMA_DIR}/models/tiny.gguf`], "-np": [1, 2, 4] },
        constraints: { time_to_first_token_p90: { max: TTFT_P90_MS } },
        "export-path": dir,
        "checkpoint-directory": `${dir}/checkpoints`,
      };
      Deno.writeTextFileSync(`${dir}/engine.yaml`, JSON.stringify(config));
      const run = await runCli(["profile", "--config", `${dir}/engine.yaml`], {
        permissions: PERMISSIONS,
        timeoutMs: 180_000,
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(
        run.stdout,
        /Best command line: \S+llama-server -m \S+tiny\.gguf --host 127\.0\.0\.1 --port \d+ --metrics -t 1 -c 8192 --slot-save-path \S+ -np \d\n/,
      );
      const table = parseCsv(Deno.readTextFileSync(`${dir}/results/metrics-llm-inference.csv`));
      const at = (name: string) => table[0]!.indexOf(name);
      const rows = table.slice(1);
      assert.ok(rows.length >= 3, `${rows.length} points`);
      // Every point: 96 requests of 32 tokens, counted alike by the client and the server.
      for (const r of rows) {
        assert.equal(r[at("Requests")], "96");
        assert.equal(r[at("Client Output Tokens")], String(96 * 32), r.join(","));
        assert.equal(r[at("Server Generated Tokens")], String(96 * 32), r.join(","));
        const ttft = Number(r[at("Time To First Token p90 (ms)")]);
        assert.equal(r[at("Satisfies Constraints")], ttft <= TTFT_P90_MS ? "Yes" : "No");
      }
      // Every setting measured, the search's best among them, its log kept.
      assert.deepEqual(new Set(rows.map((r) => r[0])), new Set(["-np=1", "-np=2", "-np=4"]));
      assert.match(run.stdout, /Best -np=\d\n/);
      assert.deepEqual(Deno.readDirSync(`${dir}/logs`).map((e) => e.name).toArray().sort(), [
        "0_-np=1.log",
        "1_-np=2.log",
        "2_-np=4.log",
      ]);
      const search = rows.map((r) => ({
        setting: Number(r[0]!.slice("-np=".length)),
        load: Number(r[at("Value")]),
        throughput: Number(r[at("Output Token Throughput (tokens/sec)")]),
        ttftP90: Number(r[at("Time To First Token p90 (ms)")]),
      }));
      const plain = await plainRuns(search, dir);
      const rerun = (p: Point) => plain.find((x) => x.setting === p.setting && x.load === p.load)!;
      const gap = (a: number, b: number) => Math.abs(a - b) / Math.max(a, b);
      const ratios = search.map((p) => p.throughput / rerun(p).throughput).sort((a, b) => a - b);
      const median = interpolatedPercentile(ratios, 50);
      const repeat = Math.max(...search.map((p) => gap(p.throughput, rerun(p).throughput)));
      console.log(
        `search/plain tokens/s: median ${median.toFixed(2)}; repeat error up to ${
          repeat.toFixed(2)
        }`,
      );
      assert.ok(median >= MEDIAN_RATIO[0]! && median <= MEDIAN_RATIO[1]!, `median ${median}`);
      let verdicts = 0;
      for (const p of search) {
        const q = rerun(p);
        console.log(`-np ${p.setting} concurrency ${p.load}: search ${show(p)}; plain ${show(q)}`);
        if ([p, q].every((x) => Math.abs(x.ttftP90 - TTFT_P90_MS) > TTFT_P90_MS * NEAR_BOUND)) {
          assert.equal(
            q.ttftP90 <= TTFT_P90_MS,
            p.ttftP90 <= TTFT_P90_MS,
            `-np ${p.setting} c${p.load}`,
          );
          verdicts++;
        }
      }
      // Each setting's objective: its best output tokens/s within the constraint (0 with none).
      const searchBest = bestBySetting(search);
      const plainBest = bestBySetting(plain);
      console.log(`objective by -np: search ${fmt(searchBest)}; plain ${fmt(plainBest)}`);
      const best = /Best -np=(\d)\n/.exec(run.stdout)![1];
      assert.equal(Number(best), [...searchBest].sort((a, b) => b[1] - a[1])[0]![0]);
      // A pair is ranked only where both measurements tell its settings apart.
      const apart = (a: number, b: number) => gap(a, b) > Math.max(TIE, repeat);
      const ranked: string[] = [];
      for (const [a, sa] of searchBest) {
        for (const [b, sb] of searchBest) {
          const [pa, pb] = [plainBest.get(a)!, plainBest.get(b)!];
          if (a < b && apart(sa, sb) && apart(pa, pb)) {
            assert.equal(pa > pb, sa > sb, `-np ${a} against -np ${b}`);
            ranked.push(`${a}/${b}`);
          }
        }
      }
      console.log(
        `verdicts alike: ${verdicts} of ${search.length}; pairs told apart by both and ranked ` +
          `alike: ${ranked.join(", ") || "none"}`,
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

interface Point {
  setting: number;
  load: number;
  throughput: number;
  ttftP90: number;
}

const show = (p: Point) =>
  `${p.throughput.toFixed(1)} tokens/s, TTFT p90 ${p.ttftP90.toFixed(1)} ms`;
const fmt = (best: Map<number, number>) =>
  [...best].map(([setting, value]) => `${setting}: ${value.toFixed(1)}`).join(", ");

function bestBySetting(points: readonly Point[]): Map<number, number> {
  const best = new Map<number, number>();
  for (const p of points) {
    const within = p.ttftP90 <= TTFT_P90_MS ? p.throughput : 0;
    best.set(p.setting, Math.max(best.get(p.setting) ?? 0, within));
  }
  return best;
}

/** Every slot's cache emptied, as the search's llama.cpp preset does between points. */
async function eraseSlots(addr: string): Promise<void> {
  const slots = await (await fetch(`http://${addr}/slots`)).json() as Array<{ id: number }>;
  for (const { id } of slots) {
    const response = await fetch(`http://${addr}/slots/${id}?action=erase`, { method: "POST" });
    await response.body?.cancel();
    assert.equal(response.status, 200, `slot ${id} erase`);
  }
}

/** The search's points again as plain profile runs: one fresh server per setting. */
async function plainRuns(points: readonly Point[], dir: string): Promise<Point[]> {
  const measured: Point[] = [];
  for (const setting of new Set(points.map((p) => p.setting))) {
    const server = await startLlama({ parallel: setting, args: ["--slot-save-path", dir] });
    try {
      const loads = points.filter((p) => p.setting === setting).map((p) => p.load);
      for (const [i, load] of loads.sort((a, b) => a - b).entries()) {
        if (i > 0) await eraseSlots(server.addr);
        const summary = `${dir}/plain_${setting}_${load}.json`;
        const run = await runCli([
          ...["profile", "-m", "tiny", "--service-kind", "openai", "-u", server.addr],
          ...["--endpoint", "v1/chat/completions", "--streaming"],
          ...["--request-count", String(CLIENT["request-count"])],
          ...["--warmup-request-count", String(CLIENT["warmup-request-count"])],
          ...["--synthetic-input-tokens-mean", String(CLIENT["synthetic-input-tokens-mean"])],
          ...["--output-tokens-mean", String(CLIENT["output-tokens-mean"])],
          ...["--output-tokens-mean-deterministic", "--concurrency-range", String(load)],
          ...["--summary-json", summary],
        ], { timeoutMs: 60_000 });
        assert.equal(run.code, 0, run.stderr + run.stdout);
        const { llm } = JSON.parse(Deno.readTextFileSync(summary)).levels[0];
        measured.push({
          setting,
          load,
          throughput: llm.output_token_throughput_tokens_per_sec,
          ttftP90: llm.time_to_first_token_ms.p90,
        });
      }
    } finally {
      await server.stop();
    }
  }
  return measured;
}
