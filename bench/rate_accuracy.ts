/**
 * How exactly the open-loop load keeps its schedule: at each target rate, the
 * achieved send rate and the send lag (dispatch minus intended time) of
 * lib/load/rate.ts, run in a process of its own (like the CLI) against nginx
 * (or the reference server when nginx is absent) in the bench process.
 * Target: within 1 % of the rate, p99 send lag under 1 ms.
 *
 * `deno run --allow-net --allow-read bench/rate_accuracy.ts ADDR OPTIONS`
 * (OPTIONS: MeasureOptions as JSON, which a later version may extend) measures
 * in this process and prints the results as JSON. With `--baseline`, the
 * baseline checkout's own script measures its own lib/load/rate.ts; one from
 * before this argument format fails its rounds.
 */
import { RoundRobinFeed } from "../lib/load/feed.ts";
import { DEFAULT_MAX_INFLIGHT, DEFAULT_SEND_BATCH_MS, RateLoad } from "../lib/load/rate.ts";
import { constantSchedule } from "../lib/load/schedule.ts";
import { Recorder } from "../lib/measure/recorder.ts";
import { percentile } from "../lib/measure/stats.ts";
import { KServeHttpClient } from "../lib/protocol/kserve_http.ts";
import { inferperfRoot } from "./inferperf.ts";
import { runCommand } from "./process.ts";
import { type HttpTarget, startHttpTarget } from "./targets.ts";

export interface RateAccuracyOptions {
  /** Requests per second to measure. Default [1000, 5000]. */
  rates?: number[];
  /** Measured time per rate after the warmup. Default 5000 ms. */
  durationMs?: number;
  /** Sent first and not measured (connections, JIT). Default 1000 ms. */
  warmupMs?: number;
  maxInflight?: number;
  /** --send-batching. Default inferperf's. */
  batchMs?: number;
}

interface MeasureOptions {
  rates: number[];
  durationMs: number;
  warmupMs: number;
  maxInflight: number;
  batchMs: number;
}

export interface RateAccuracyResult {
  rate: number;
  achievedRate: number;
  /** |achieved - target| / target, percent. */
  rateErrorPct: number;
  sendLagP50Us: number;
  sendLagP99Us: number;
  sendLagMaxUs: number;
  sends: number;
  blocked: number;
  failed: number;
  /** Within 1 % of the rate and p99 send lag under 1 ms. */
  onTarget: boolean;
}

/** Triton's `simple` request (two INT32[1,16] inputs). */
function simpleRequest(client: KServeHttpClient) {
  const input = (name: string) => ({
    name,
    datatype: "INT32" as const,
    shape: [1, 16],
    data: new Uint8Array(64),
  });
  return client.prepare(
    { inputs: [input("INPUT0"), input("INPUT1")], outputs: ["OUTPUT0", "OUTPUT1"] },
    { model: "simple", version: "" },
  );
}

/** Runs the load at each rate in this process. */
async function measure(addr: string, options: MeasureOptions): Promise<RateAccuracyResult[]> {
  const client = new KServeHttpClient({ url: addr, inputFormat: "binary", outputFormat: "binary" });
  const load = new RateLoad(client, {
    feed: new RoundRobinFeed([simpleRequest(client)]),
    maxInflight: options.maxInflight,
    batchMs: options.batchMs,
  });
  const results: RateAccuracyResult[] = [];
  try {
    for (const rate of options.rates) {
      const recorder = new Recorder();
      load.start(constantSchedule(rate), { recorder });
      await new Promise((r) => setTimeout(r, options.warmupMs));
      recorder.rotate();
      await new Promise((r) => setTimeout(r, options.durationMs));
      const window = recorder.rotate();
      await load.stop();
      const lags = Float64Array.from(window.sendLagsUs).sort();
      const achievedRate = window.sendCount / ((window.endMs - window.startMs) / 1000);
      const rateErrorPct = (Math.abs(achievedRate - rate) / rate) * 100;
      const sendLagP99Us = percentile(lags, 99);
      results.push({
        rate,
        achievedRate,
        rateErrorPct,
        sendLagP50Us: percentile(lags, 50),
        sendLagP99Us,
        sendLagMaxUs: lags[lags.length - 1],
        sends: window.sendCount,
        blocked: window.blockedCount,
        failed: window.errorCount,
        onTarget: rateErrorPct <= 1 && sendLagP99Us < 1000,
      });
    }
  } finally {
    load.close();
    await client.close();
  }
  return results;
}

/** Starts the target and measures every rate in a child process. */
export async function rateAccuracy(
  options: RateAccuracyOptions = {},
): Promise<{ target: HttpTarget["kind"]; results: RateAccuracyResult[] }> {
  const { rates = [1000, 5000], durationMs = 5000, warmupMs = 1000 } = options;
  const maxInflight = options.maxInflight ?? DEFAULT_MAX_INFLIGHT;
  const target = await startHttpTarget();
  try {
    const measureOptions: MeasureOptions = {
      rates,
      durationMs,
      warmupMs,
      maxInflight,
      batchMs: options.batchMs ?? DEFAULT_SEND_BATCH_MS,
    };
    const root = inferperfRoot();
    const result = await runCommand(Deno.execPath(), [
      "run",
      "--allow-net",
      "--allow-read",
      `${root}/bench/rate_accuracy.ts`,
      target.addr,
      JSON.stringify(measureOptions),
    ], { cwd: root });
    if (result.code !== 0) {
      throw new Error(`The rate accuracy run failed (${result.code}): ${result.stderr.trim()}`);
    }
    return { target: target.kind, results: JSON.parse(result.stdout) };
  } finally {
    await target.close();
  }
}

if (import.meta.main) {
  const [addr, options] = Deno.args;
  const results = await measure(addr, JSON.parse(options) as MeasureOptions);
  console.log(JSON.stringify(results));
}
