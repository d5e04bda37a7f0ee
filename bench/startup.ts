/**
 * Start-up: wall time of `inferperf --version` and from spawn to the first
 * infer request arriving at a server (discovery included), median of runs
 * after one untimed run that fills Deno's module cache.
 */
import * as inferperf from "./inferperf.ts";
import { median, runCommand } from "./process.ts";
import { startProbe } from "./probe.ts";
import { type BenchRow, type CaseResult, ratio } from "./types.ts";

const TARGET_MS = 150;

export interface StartupOptions {
  /** Timed runs of each measurement. Default 7. */
  runs?: number;
}

/** The runtime's own floor: `deno run` of an empty module. */
async function emptyDenoRun(dir: string): Promise<number> {
  const result = await runCommand(Deno.execPath(), ["run", `${dir}/empty.ts`], { cwd: dir });
  if (result.code !== 0) throw new Error(`deno run of an empty module failed: ${result.stderr}`);
  return result.elapsedMs;
}

async function firstRequest(): Promise<{ firstMs: number; exitMs: number }> {
  const probe = startProbe();
  try {
    const run = await inferperf.profile([
      "-u",
      probe.addr,
      "-m",
      "simple",
      "--request-count",
      "1",
    ]);
    const first = await probe.firstInfer;
    return { firstMs: first.atMs - run.startMs, exitMs: run.elapsedMs };
  } finally {
    await probe.close();
  }
}

async function timed<T>(runs: number, once: () => Promise<T>): Promise<T[]> {
  await once();
  const results: T[] = [];
  for (let i = 0; i < runs; i++) results.push(await once());
  return results;
}

export async function startup(options: StartupOptions = {}): Promise<CaseResult> {
  const runs = options.runs ?? 7;
  const dir = await Deno.makeTempDir({ prefix: "inferperf-bench-startup-" });
  try {
    await Deno.writeTextFile(`${dir}/empty.ts`, "");
    const floor = median(await timed(runs, () => emptyDenoRun(dir)));
    const version = median((await timed(runs, inferperf.version)).map((v) => v.elapsedMs));
    const first = await timed(runs, firstRequest);
    const firstMs = median(first.map((f) => f.firstMs));
    const exitMs = median(first.map((f) => f.exitMs));
    const row = (name: string, value: number, note: string): BenchRow => ({
      name,
      unit: "ms",
      inferperf: value,
      reference: floor,
      referenceName: "deno run (empty module)",
      ratio: ratio(value, floor),
      target: `< ${TARGET_MS} ms`,
      met: value < TARGET_MS,
      note,
    });
    return {
      id: "startup",
      title: "Start-up",
      rows: [
        row("Start-up: --version", version, "spawn to exit"),
        row(
          "Start-up: first request",
          firstMs,
          `spawn to the first infer request at the server (after 3 discovery GETs); exit after 1 request ${
            exitMs.toFixed(0)
          } ms`,
        ),
      ],
      notes: [`Median of ${runs} runs after one untimed run (module cache warm).`],
      details: { runs, emptyDenoRunMs: floor, versionMs: version, firstRequestMs: firstMs, exitMs },
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
