/** Runs the inferperf CLI as a child process, the way users run it, and reads its CSV report. */
import { runCommand, runSampled, type SampledResult, type SampleOptions } from "./process.ts";

/** This repository's root: the child finds deno.json and node_modules from there. */
export const BENCH_ROOT = new URL("..", import.meta.url).pathname;

let root = BENCH_ROOT;

/** The checkout whose inferperf the cases run: this one, or a baseline's (`--baseline`). */
export function inferperfRoot(): string {
  return root;
}

/** Runs the cases against the inferperf of the checkout at `path` from now on. */
export function useInferperfRoot(path: string): void {
  root = path;
}
/** What `deno task start` passes: its V8 flag (bounds memory, see BENCHMARKS.md) and grants. */
const PERMISSIONS = [
  "--v8-flags=--max-semi-space-size=4",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
];

/** The deno command line that runs inferperf with `args`. */
export function inferperfArgs(args: readonly string[]): string[] {
  return ["run", ...PERMISSIONS, "main.ts", ...args];
}

/** One level of the CSV report. */
export interface CsvLevel {
  value: number;
  throughput: number;
  p50Us: number;
  p99Us: number;
  /** Open-loop levels only. */
  sendLagP99Us?: number;
}

/** The levels of a perf_analyzer-style CSV report (-f). */
export function parseCsv(text: string): CsvLevel[] {
  const [header, ...rows] = text.trim().split("\n").map((line) => line.split(","));
  const column = (name: string) => {
    const index = header.indexOf(name);
    if (index < 0) throw new Error(`The CSV report has no "${name}" column`);
    return index;
  };
  const value = 0;
  const throughput = column("Inferences/Second");
  const p50 = column("p50 latency");
  const p99 = column("p99 latency");
  const lag = header.indexOf("Send Lag p99");
  return rows.map((cells) => ({
    value: Number(cells[value]),
    throughput: Number(cells[throughput]),
    p50Us: Number(cells[p50]),
    p99Us: Number(cells[p99]),
    ...(lag >= 0 && cells[lag] !== "" ? { sendLagP99Us: Number(cells[lag]) } : {}),
  }));
}

export interface InferperfRun extends SampledResult {
  levels: CsvLevel[];
}

/**
 * Profiles with `args` plus a CSV report, sampling the child's CPU and memory.
 * A non-zero exit code is an error carrying the child's stderr.
 */
export async function profile(
  args: readonly string[],
  options: Partial<Omit<SampleOptions, "cwd">> = {},
): Promise<InferperfRun> {
  const csv = await Deno.makeTempFile({ prefix: "inferperf-bench-", suffix: ".csv" });
  try {
    const result = await runSampled(Deno.execPath(), inferperfArgs([...args, "-f", csv]), {
      intervalMs: 250,
      ...options,
      cwd: root,
    });
    if (result.code !== 0) {
      throw new Error(
        `inferperf ${args.join(" ")} exited with code ${result.code}: ${result.stderr.trim()}`,
      );
    }
    return { ...result, levels: parseCsv(await Deno.readTextFile(csv)) };
  } finally {
    await Deno.remove(csv);
  }
}

/**
 * One stable level at `concurrency`: time windows of `seconds` after 2000
 * warmup requests, stable within 1000 % (the bench measures capacity, not
 * stability: a shared machine's windows vary by more than 50 %), at most 5 windows.
 */
export function stableLevel(
  args: readonly string[],
  options: { concurrency: number; seconds: number; counter?: () => Promise<number> },
): Promise<InferperfRun> {
  return profile([
    ...args,
    "--concurrency-range",
    String(options.concurrency),
    "--warmup-request-count",
    "2000",
    "-p",
    String(options.seconds * 1000),
    "-s",
    "1000",
    "-r",
    "5",
  ], options.counter ? { counter: options.counter } : {});
}

/** One level at `concurrency` measured as one window of `requests` after `warmup` requests. */
export function countedRun(
  args: readonly string[],
  options: {
    concurrency: number;
    warmup: number;
    requests: number;
    counter?: () => Promise<number>;
  },
): Promise<InferperfRun> {
  return profile([
    ...args,
    "--concurrency-range",
    String(options.concurrency),
    "--warmup-request-count",
    String(options.warmup),
    "--request-count",
    String(options.requests),
  ], options.counter ? { counter: options.counter } : {});
}

/** Runs `inferperf --version` once; the elapsed time is the start-up cost. */
export async function version(): Promise<{ elapsedMs: number; text: string }> {
  const result = await runCommand(Deno.execPath(), inferperfArgs(["--version"]), {
    cwd: root,
  });
  if (result.code !== 0) throw new Error(`inferperf --version failed: ${result.stderr.trim()}`);
  return { elapsedMs: result.elapsedMs, text: result.stdout.trim() };
}
