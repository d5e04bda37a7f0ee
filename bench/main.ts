/**
 * `deno task bench`: each case runs inferperf and a reference tool side by
 * side on loopback, prints one table of absolute figures and ratios, and
 * writes bench/results.json. Never part of the test suite.
 */
import { parseArgs } from "node:util";
import {
  addWorktree,
  compareCase,
  defaultBaselineFlag,
  resolveBaseline,
  roundOrder,
  type Worktree,
} from "./baseline.ts";
import { withBudgets } from "./budget.ts";
import { clientCost, type CostMode } from "./client_cost.ts";
import { httpCapacity } from "./http_capacity.ts";
import * as inferperf from "./inferperf.ts";
import { BENCH_ROOT, useInferperfRoot } from "./inferperf.ts";
import { llmStream } from "./llm_stream.ts";
import { loadAverage, machineInfo } from "./machine.ts";
import { grpcCapacity } from "./grpc_capacity.ts";
import { mpiRanks } from "./mpi.ts";
import { multicore } from "./multicore.ts";
import { describePinning, findExecutable, pin, type Pinning } from "./process.ts";
import { rateAccuracy } from "./rate_accuracy.ts";
import { soak } from "./soak.ts";
import { startup } from "./startup.ts";
import { type BenchReport, formatReport } from "./table.ts";
import { tritonBench } from "./triton.ts";
import { type HttpTarget, startHttpTarget } from "./targets.ts";
import type { BenchRow, CaseResult } from "./types.ts";

const USAGE = `Usage: deno task bench [options]

  --cases LIST            any of http,grpc,rate,cost,startup,multicore,mpi,llm,triton, run in
                          the order given (default all), and soak (only when named)
  --seconds N             HTTP capacity: measured seconds per tool, level and round (default 3)
  --rounds N              HTTP capacity: alternating wrk/inferperf rounds per level; gRPC:
                          alternating inferperf/h2load rounds; Triton: rounds over every
                          level (default 3)
  --concurrency LIST      HTTP capacity and Triton levels (default 1,16,64)
  --wrk-threads N         wrk threads (default 1: inferperf runs one event loop)
  --grpc-seconds N        gRPC capacity: measured seconds per tool (default 3)
  --rates LIST            rate accuracy: requests/s (default 1000,5000,10000)
  --rate-seconds N        rate accuracy: measured seconds per rate (default 5)
  --send-batching MS      rate accuracy and cost: inferperf's --send-batching (default its own)
  --cost-seconds N        client cost run length (default 30; issue 8 asks 120)
  --cost-modes LIST       concurrency,rate,grpc-rate (default concurrency,rate)
  --cost-distribution D   open-loop cost modes: constant or poisson (default constant)
  --cost-rate N           client cost requests/s (default 5000)
  --cost-concurrency N    in-flight requests of the concurrency cost mode (default 16)
  --cost-export on|off    client cost with the profile export (default on)
  --startup-runs N        timed start-up runs (default 7)
  --multicore-seconds N   multi-core: measured seconds per tool, thread count and round (default 3)
  --llm-rounds N          LLM streaming: rounds of 64 answers of 200 tokens at 5 ms (default 6)
  --triton-seconds N      real Triton: measured seconds per tool, protocol and level (default 3)
  --soak-minutes N        soak: run length (default 10)
  --soak-rate N           soak: requests/s (default 5000)
  --soak-concurrency N    soak: N requests in flight instead of a rate
  --soak-window N         soak: time window, ms (default 5000, perf_analyzer's)
  --baseline [REF]        also run every case for REF's code (a commit, tag or branch, checked
                          out into a temporary git worktree sharing node_modules), in --rounds
                          paired rounds alternating in both orders (ABBA...); each figure gets
                          "× baseline": this code's / REF's, median and range over the rounds.
                          Without REF: the latest release tag (v*), else the main commit this
                          code started from (main~1 on main, the merge base on a branch)
  --pin on|off            servers on CPU 0, clients on CPU 1 (taskset; default on with
                          --baseline when there are 2 CPUs or more); never multicore and mpi
  --out FILE              results file (default bench/results.json)

Needs wrk, nginx, h2load and mpirun (bench/setup.sh installs them); without nginx the
HTTP case loads the reference server, without h2load the gRPC case has no
reference figure, and the report says so. The triton case needs the real
server (../shared/tritonserver beside the repository, or TRITONSERVER_DIR).`;

const ALL_CASES = ["http", "grpc", "rate", "cost", "startup", "multicore", "mpi", "llm", "triton"];
/** Cases too long for a default run. */
const NAMED_CASES = ["soak"];
/** Issue 8: within 1 % of the rate and p99 send lag under 1 ms, up to 5k req/s. */
const RATE_TARGET_MAX = 5000;
const RATE_TARGET_ERROR_PCT = 1;
const RATE_TARGET_LAG_US = 1000;
const RATE_WARMUP_MS = 1000;

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`Option --${name} needs a positive number, got "${text}"`);
  }
  return value;
}

function positiveInt(name: string, text: string): number {
  const value = positive(name, text);
  if (!Number.isInteger(value)) {
    throw new RangeError(`Option --${name} needs a whole number, got "${text}"`);
  }
  return value;
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      cases: { type: "string", default: ALL_CASES.join(",") },
      seconds: { type: "string", default: "3" },
      rounds: { type: "string", default: "3" },
      concurrency: { type: "string", default: "1,16,64" },
      "wrk-threads": { type: "string", default: "1" },
      "grpc-seconds": { type: "string", default: "3" },
      rates: { type: "string", default: "1000,5000,10000" },
      "send-batching": { type: "string" },
      "rate-seconds": { type: "string", default: "5" },
      "cost-seconds": { type: "string", default: "30" },
      "cost-modes": { type: "string" },
      "cost-rate": { type: "string", default: "5000" },
      "cost-export": { type: "string", default: "on" },
      "cost-distribution": { type: "string", default: "constant" },
      "cost-concurrency": { type: "string", default: "16" },
      "startup-runs": { type: "string", default: "7" },
      "multicore-seconds": { type: "string", default: "3" },
      "llm-rounds": { type: "string", default: "6" },
      "triton-seconds": { type: "string", default: "3" },
      "soak-minutes": { type: "string", default: "10" },
      "soak-rate": { type: "string", default: "5000" },
      "soak-concurrency": { type: "string" },
      "soak-window": { type: "string", default: "5000" },
      baseline: { type: "string" },
      pin: { type: "string" },
      out: { type: "string", default: new URL("results.json", import.meta.url).pathname },
      help: { type: "boolean", default: false },
    },
  });
  const cases = values.cases.split(",").filter((c) => c !== "");
  const unknown = cases.filter((c) => !ALL_CASES.includes(c) && !NAMED_CASES.includes(c));
  if (unknown.length > 0) throw new RangeError(`Unknown cases: ${unknown.join(", ")}`);
  const costModes = values["cost-modes"]?.split(",");
  const badModes = costModes?.filter((m) => !["rate", "concurrency", "grpc-rate"].includes(m)) ??
    [];
  if (badModes.length > 0) throw new RangeError(`Unknown cost modes: ${badModes.join(", ")}`);
  if (values.pin !== undefined && !["on", "off"].includes(values.pin)) {
    throw new RangeError(`Option --pin takes on or off, got "${values.pin}"`);
  }
  return {
    help: values.help,
    cases,
    seconds: positive("seconds", values.seconds),
    rounds: positiveInt("rounds", values.rounds),
    concurrencies: values.concurrency.split(",").map((c) => positiveInt("concurrency", c)),
    wrkThreads: positiveInt("wrk-threads", values["wrk-threads"]),
    grpcSeconds: positive("grpc-seconds", values["grpc-seconds"]),
    rates: values.rates.split(",").map((r) => positiveInt("rates", r)),
    rateSeconds: positive("rate-seconds", values["rate-seconds"]),
    sendBatchMs: values["send-batching"] === undefined
      ? undefined
      : Number(values["send-batching"]),
    costSeconds: positive("cost-seconds", values["cost-seconds"]),
    costModes: costModes as CostMode[] | undefined,
    costRate: positiveInt("cost-rate", values["cost-rate"]),
    costExport: values["cost-export"] !== "off",
    costDistribution: values["cost-distribution"],
    costConcurrency: positiveInt("cost-concurrency", values["cost-concurrency"]),
    startupRuns: positiveInt("startup-runs", values["startup-runs"]),
    multicoreSeconds: positive("multicore-seconds", values["multicore-seconds"]),
    llmRounds: positiveInt("llm-rounds", values["llm-rounds"]),
    tritonSeconds: positive("triton-seconds", values["triton-seconds"]),
    soakMinutes: positive("soak-minutes", values["soak-minutes"]),
    soakRate: positiveInt("soak-rate", values["soak-rate"]),
    soakConcurrency: values["soak-concurrency"] === undefined
      ? undefined
      : positiveInt("soak-concurrency", values["soak-concurrency"]),
    soakWindowMs: positiveInt("soak-window", values["soak-window"]),
    /** "" for the default baseline. */
    baseline: values.baseline,
    pin: values.pin === undefined ? values.baseline !== undefined : values.pin === "on",
    out: values.out,
  };
}

type Options = ReturnType<typeof parseOptions>;

/** Runs `fn` with wrk's path against the HTTP target (nginx, else the reference server). */
async function withWrkTarget(
  fn: (target: HttpTarget, wrk: string) => Promise<CaseResult>,
): Promise<CaseResult> {
  const wrk = findExecutable("wrk");
  if (wrk === undefined) {
    throw new Error("wrk is not installed: run bench/setup.sh (apt-get install wrk)");
  }
  const target = await startHttpTarget();
  try {
    return await fn(target, wrk);
  } finally {
    await target.close();
  }
}

function runHttp(options: Options): Promise<CaseResult> {
  return withWrkTarget((target, wrk) =>
    httpCapacity(target, wrk, {
      concurrencies: options.concurrencies,
      seconds: options.seconds,
      rounds: options.rounds,
      wrkThreads: options.wrkThreads,
    })
  );
}

async function runRate(options: Options): Promise<CaseResult> {
  const { target, results } = await rateAccuracy({
    rates: options.rates,
    durationMs: options.rateSeconds * 1000,
    warmupMs: RATE_WARMUP_MS,
    ...(options.sendBatchMs === undefined ? {} : { batchMs: options.sendBatchMs }),
  });
  const rows = results.flatMap((r): BenchRow[] => {
    const targeted = r.rate <= RATE_TARGET_MAX;
    return [
      {
        name: `Rate ${r.rate}/s: achieved`,
        unit: "req/s",
        inferperf: r.achievedRate,
        reference: r.rate,
        referenceName: "schedule",
        ratio: r.achievedRate / r.rate,
        ...(targeted
          ? {
            target: `within ${RATE_TARGET_ERROR_PCT} %`,
            met: r.rateErrorPct <= RATE_TARGET_ERROR_PCT,
          }
          : {}),
        note: `${r.sends} sent, ${r.blocked} blocked at --max-inflight, ${r.failed} failed`,
      },
      {
        name: `Rate ${r.rate}/s: send lag p99`,
        unit: "µs",
        inferperf: r.sendLagP99Us,
        ...(targeted
          ? { target: `< ${RATE_TARGET_LAG_US}`, met: r.sendLagP99Us < RATE_TARGET_LAG_US }
          : {}),
        note: `p50 ${r.sendLagP50Us.toFixed(0)} µs, max ${r.sendLagMaxUs.toFixed(0)} µs`,
      },
    ];
  });
  return {
    id: "rate",
    title: "Rate accuracy",
    rows,
    notes: [
      `Open-loop load (lib/load/rate.ts) in a process of its own against ${
        target === "nginx" ? "nginx" : "the reference server (nginx is not installed)"
      }, ${options.rateSeconds} s per rate after ${RATE_WARMUP_MS / 1000} s of warmup.`,
    ],
    details: results,
  };
}

const RUNNERS: Record<string, (options: Options) => Promise<CaseResult>> = {
  http: runHttp,
  grpc: (o) => grpcCapacity({ seconds: o.grpcSeconds, rounds: o.rounds }),
  mpi: (o) => mpiRanks({ rounds: o.rounds }),
  rate: runRate,
  cost: (o) =>
    clientCost({
      seconds: o.costSeconds,
      rate: o.costRate,
      concurrency: o.costConcurrency,
      export: o.costExport,
      ...(o.costModes ? { modes: o.costModes } : {}),
      distribution: o.costDistribution === "poisson" ? "poisson" : "constant",
      ...(o.sendBatchMs === undefined
        ? {}
        : { extraArgs: ["--send-batching", String(o.sendBatchMs)] }),
    }),
  startup: (o) => startup({ runs: o.startupRuns }),
  multicore: (o) =>
    withWrkTarget((target, wrk) =>
      multicore(target, wrk, { seconds: o.multicoreSeconds, rounds: o.rounds })
    ),
  llm: (o) => llmStream({ concurrency: 64, tokens: 200, itlMs: 5, rounds: o.llmRounds }),
  triton: (o) =>
    tritonBench({ concurrencies: o.concurrencies, seconds: o.tritonSeconds, rounds: o.rounds }),
  soak: (o) =>
    soak({
      minutes: o.soakMinutes,
      rate: o.soakRate,
      windowMs: o.soakWindowMs,
      ...(o.soakConcurrency === undefined ? {} : { concurrency: o.soakConcurrency }),
    }),
};

/** Cases whose clients use several CPUs: never pinned to one. */
const UNPINNED_CASES = new Set(["multicore", "mpi"]);

/** Servers on CPU 0 and clients on CPU 1 when asked for and possible; why not otherwise. */
function pinning(wanted: boolean): Pinning | string {
  if (!wanted) return "not pinned";
  const taskset = findExecutable("taskset");
  if (navigator.hardwareConcurrency < 2) {
    return `not pinned: ${navigator.hardwareConcurrency} CPU`;
  }
  if (taskset === undefined) return "not pinned: taskset is not installed (util-linux)";
  return { taskset, server: 0, client: 1 };
}

/** Runs case `id`, pinned as asked unless its clients need several CPUs. */
async function runCase(id: string, options: Options, pinTo: Pinning | undefined) {
  const pinned = UNPINNED_CASES.has(id) ? undefined : pinTo;
  await pin(pinned);
  const result = withBudgets(await RUNNERS[id](options));
  if (pinTo !== undefined && pinned === undefined) {
    result.notes.push("Not pinned: its clients use several CPUs.");
  }
  return result;
}

/** Case `id` in paired rounds of this code and the baseline's, or undefined for a side that failed. */
async function runPaired(
  id: string,
  options: Options & { worktree: Worktree; pinTo: Pinning | undefined },
): Promise<{ result: CaseResult; failures: string[] }> {
  const sides = {
    current: [] as (CaseResult | undefined)[],
    baseline: [] as (CaseResult | undefined)[],
  };
  const failures: string[] = [];
  // One round of each case's own alternation (tool against reference) per side and paired round.
  const once = { ...options, rounds: 1 };
  for (const [round, order] of roundOrder(options.rounds).entries()) {
    for (const side of order) {
      useInferperfRoot(side === "current" ? BENCH_ROOT : options.worktree.path);
      console.error(`bench: ${id} round ${round + 1} of ${options.rounds}, ${side}`);
      try {
        sides[side][round] = await runCase(id, once, options.pinTo);
      } catch (error) {
        sides[side][round] = undefined;
        failures.push(`round ${round + 1}, ${side}: ${(error as Error).message}`);
      }
    }
  }
  useInferperfRoot(BENCH_ROOT);
  const first = sides.current.find((r) => r !== undefined);
  if (first === undefined) throw new Error(failures.join("; "));
  const { rows, rounds } = compareCase(sides.current, sides.baseline);
  return {
    result: {
      ...first,
      rows,
      notes: [...first.notes, ...failures.map((f) => `Failed in ${f}`)],
      details: {
        rounds,
        current: sides.current.map((r) => r?.details),
        baseline: sides.baseline.map((r) => r?.details),
      },
    },
    failures,
  };
}

async function main(args: string[]): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(defaultBaselineFlag(args));
  } catch (error) {
    console.error(`error: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const machine = await machineInfo();
  const { text: version } = await inferperf.version();
  const placement = pinning(options.pin);
  const pinTo = typeof placement === "string" ? undefined : placement;
  const baseline = options.baseline === undefined
    ? undefined
    : await resolveBaseline(options.baseline || undefined, BENCH_ROOT);
  const worktree = baseline && await addWorktree(BENCH_ROOT, baseline.commit);
  // The worktree goes whichever way the bench ends: returned, thrown, Ctrl-C.
  const interrupted = () => {
    worktree?.remove();
    Deno.exit(130);
  };
  if (worktree) {
    console.error(`bench: baseline ${baseline!.title} in ${worktree.path}`);
    Deno.addSignalListener("SIGINT", interrupted);
    globalThis.addEventListener("unload", worktree.remove);
  }
  const cases: CaseResult[] = [];
  const failures: BenchReport["failures"] = [];
  try {
    for (const id of options.cases) {
      console.error(`bench: ${id} ...`);
      const start = performance.now();
      try {
        if (worktree) {
          const paired = await runPaired(id, { ...options, worktree, pinTo });
          cases.push(paired.result);
          failures.push(...paired.failures.map((message) => ({ id, message })));
        } else {
          cases.push(await runCase(id, options, pinTo));
        }
      } catch (error) {
        failures.push({ id, message: (error as Error).message });
      }
      console.error(`bench: ${id} done in ${((performance.now() - start) / 1000).toFixed(0)} s`);
    }
  } finally {
    await pin(undefined);
    worktree?.remove();
    if (worktree) Deno.removeSignalListener("SIGINT", interrupted);
  }
  const report: BenchReport = {
    date: new Date().toISOString(),
    command: ["deno task bench", ...args].join(" "),
    machine,
    loadAverageEnd: loadAverage(),
    inferperfVersion: version,
    pinning: typeof placement === "string" ? placement : describePinning(placement),
    ...(baseline ? { baseline: { ...baseline, rounds: options.rounds } } : {}),
    cases,
    failures,
  };
  console.log(formatReport(report));
  await Deno.writeTextFile(options.out, JSON.stringify(report, null, 2) + "\n");
  console.log(`\nWrote ${options.out}`);
  return failures.length > 0 ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
