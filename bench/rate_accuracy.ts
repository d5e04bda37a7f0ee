/**
 * How exactly the open-loop load keeps its schedule: at each target rate, the
 * achieved send rate and the send lag (dispatch minus intended time) against
 * the reference server on a second thread. Target: within 1 % of the rate,
 * p99 send lag under 1 ms.
 */
import { RoundRobinFeed } from "../lib/load/feed.ts";
import { DEFAULT_MAX_INFLIGHT, RateLoad } from "../lib/load/rate.ts";
import { constantSchedule } from "../lib/load/schedule.ts";
import { Recorder } from "../lib/measure/recorder.ts";
import { percentile } from "../lib/measure/stats.ts";
import { KServeHttpClient } from "../lib/protocol/kserve_http.ts";
import { startServerInWorker } from "../lib/server/mod.ts";

export interface RateAccuracyOptions {
  /** Requests per second to measure. Default [1000, 5000]. */
  rates?: number[];
  /** Measured time per rate after the warmup. Default 5000 ms. */
  durationMs?: number;
  /** Sent first and not measured (connections, JIT). Default 1000 ms. */
  warmupMs?: number;
  maxInflight?: number;
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

/** Triton's `simple` request (two INT32[1,16] inputs) as the reference server serves it. */
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

export async function rateAccuracy(
  options: RateAccuracyOptions = {},
): Promise<RateAccuracyResult[]> {
  const { rates = [1000, 5000], durationMs = 5000, warmupMs = 1000 } = options;
  const server = await startServerInWorker();
  const client = new KServeHttpClient({
    url: server.addr,
    inputFormat: "binary",
    outputFormat: "binary",
  });
  const load = new RateLoad(client, {
    feed: new RoundRobinFeed([simpleRequest(client)]),
    maxInflight: options.maxInflight ?? DEFAULT_MAX_INFLIGHT,
  });
  const results: RateAccuracyResult[] = [];
  try {
    for (const rate of rates) {
      const recorder = new Recorder();
      load.start(constantSchedule(rate), { recorder });
      await new Promise((r) => setTimeout(r, warmupMs));
      recorder.rotate();
      await new Promise((r) => setTimeout(r, durationMs));
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
    await server.close();
  }
  return results;
}

if (import.meta.main) {
  const rates = Deno.args.length > 0 ? Deno.args.map(Number) : undefined;
  console.log(JSON.stringify(await rateAccuracy(rates ? { rates } : {}), null, 2));
}
