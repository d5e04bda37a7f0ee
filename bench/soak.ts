/**
 * Soak (issue 17): a long open-loop run with the profile export streaming,
 * against the reference server on a thread of the bench process. The
 * client's RSS is read from /proc every few seconds; at the end the export's
 * records are counted against the server's inference count (nothing lost).
 * Stability is made unreachable so that the level runs every window.
 */
import { delayModel } from "./client_cost.ts";
import { inferperfArgs, inferperfRoot } from "./inferperf.ts";
import { type CountedSample, runSampled } from "./process.ts";
import { startReferenceTarget } from "./targets.ts";
import type { CaseResult } from "./types.ts";

const SAMPLE_MS = 5000;
/** Issue 17: RSS within 10 % of its value after the first minute. */
const RSS_GROWTH_PCT = 10;
const FIRST_MINUTE_MS = 60_000;

export interface SoakOptions {
  minutes: number;
  /** Requests per second (open loop), unless `concurrency` is given. */
  rate: number;
  /**
   * Requests in flight (closed loop) instead of a rate, against a model whose
   * latency makes them about `rate` requests/s.
   */
  concurrency?: number;
  /** Time window length (-p). */
  windowMs: number;
}

/** Counts the request records of a profile export without holding it in memory as JSON. */
async function exportedRequests(path: string): Promise<number> {
  let count = 0;
  let carry = "";
  const file = await Deno.open(path);
  try {
    for await (const chunk of file.readable.pipeThrough(new TextDecoderStream())) {
      const text = carry + chunk;
      // Every exported request carries exactly one "timestamp" field.
      count += text.split('"timestamp"').length - 1;
      carry = text.slice(-16);
      if (carry.includes('"timestamp"')) carry = "";
    }
  } catch (error) {
    file.close();
    throw error;
  }
  return count;
}

export async function soak(options: SoakOptions): Promise<CaseResult> {
  const { concurrency } = options;
  const target = await startReferenceTarget(
    concurrency === undefined
      ? undefined
      : [delayModel((concurrency / options.rate) * 1000, concurrency)],
  );
  const dir = await Deno.makeTempDir({ prefix: "inferperf-soak-" });
  try {
    const trials = Math.ceil((options.minutes * 60_000) / options.windowMs);
    const run = await runSampled(
      Deno.execPath(),
      inferperfArgs([
        "-m",
        concurrency === undefined ? "simple" : "delay",
        "-u",
        target.addr,
        ...(concurrency === undefined
          ? ["--request-rate-range", `${options.rate}`]
          : ["--concurrency-range", `${concurrency}`]),
        "-p",
        `${options.windowMs}`,
        "--max-trials",
        `${trials}`,
        "--stability-percentage",
        "0.001",
        "--profile-export-file",
        `${dir}/export.json`,
      ]),
      { intervalMs: SAMPLE_MS, cwd: inferperfRoot() },
    );
    // Exit code 2: never stable, as intended.
    if (run.code !== 2) {
      throw new Error(`inferperf exited with code ${run.code}: ${run.stderr.trim()}`);
    }
    const served = await target.requestCount();
    const exported = await exportedRequests(`${dir}/export.json`);
    const rssAt = (s: CountedSample) => s.rssKb / 1024;
    const first = run.samples.find((s) => s.timeMs - run.startMs >= FIRST_MINUTE_MS);
    const later = run.samples.filter((s) => first !== undefined && s.timeMs > first.timeMs);
    const baseMb = first ? rssAt(first) : NaN;
    const peakMb = Math.max(...later.map(rssAt));
    const growthPct = (peakMb / baseMb - 1) * 100;
    const load = concurrency === undefined ? `${options.rate}/s` : `concurrency ${concurrency}`;
    return {
      id: "soak",
      title: "Soak",
      rows: [
        {
          name: `Soak ${load}, ${options.minutes} min, export: RSS growth after 1 min`,
          unit: "%",
          inferperf: growthPct,
          target: `<= ${RSS_GROWTH_PCT}`,
          met: growthPct <= RSS_GROWTH_PCT,
          note: `RSS ${baseMb.toFixed(0)} MB at 1 min, peak ${peakMb.toFixed(0)} MB after; ` +
            `windows of ${options.windowMs / 1000} s`,
        },
        {
          name: `Soak ${load}: exported records / server count`,
          unit: "records",
          inferperf: exported,
          reference: served,
          referenceName: "server count",
          ratio: exported / served,
          target: "= server count",
          met: exported === served,
        },
      ],
      notes: [
        "The reference server on a thread of the bench process; the client's RSS read from /proc " +
        `every ${SAMPLE_MS / 1000} s.`,
      ],
      details: { rssMb: run.samples.map((s) => [(s.timeMs - run.startMs) / 1000, rssAt(s)]) },
    };
  } finally {
    await target.close();
    await Deno.remove(dir, { recursive: true });
  }
}
