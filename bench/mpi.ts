/**
 * MPI ranks (issue 15): one load of the small `simple` infer at concurrency 8
 * sent by inferperf alone, then split with `--enable-mpi --shard` across 1,
 * 2 and 4 ranks started by mpirun on this machine, against the reference
 * server. The 1-rank run against the plain one is the cost of merging the
 * windows on rank 0; more ranks than free cores cannot add throughput here,
 * since ranks, server and bench share the machine.
 */
import { startServerInWorker } from "../lib/server/mod.ts";
import { inferperfArgs, inferperfRoot, parseCsv, profile } from "./inferperf.ts";
import { findExecutable, median, runCommand } from "./process.ts";
import type { BenchRow, CaseResult } from "./types.ts";

const RANKS = [1, 2, 4];
const MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe"];

export interface MpiOptions {
  /** Requests per level, the same for every run. Default 60,000. */
  requests?: number;
  /** Alternating rounds over every rank count. Default 3. */
  rounds?: number;
  concurrency?: number;
}

/** One sharded run on `ranks` ranks: rank 0's CSV holds the merged level. */
async function sharded(
  mpirun: string,
  ranks: number,
  args: readonly string[],
): Promise<number> {
  const csv = await Deno.makeTempFile({ prefix: "inferperf-bench-mpi-", suffix: ".csv" });
  try {
    const deno = inferperfArgs(["--enable-mpi", "--shard", ...args, "-f", csv]);
    // The ranks load libmpi through FFI.
    deno.splice(1, 0, "--allow-ffi");
    const run = await runCommand(
      mpirun,
      [...MPIRUN_FLAGS, "-n", String(ranks), Deno.execPath(), ...deno],
      { cwd: inferperfRoot() },
    );
    if (run.code !== 0) {
      throw new Error(`mpirun -n ${ranks} exited with code ${run.code}: ${run.stderr.trim()}`);
    }
    return parseCsv(await Deno.readTextFile(csv))[0].throughput;
  } finally {
    await Deno.remove(csv);
  }
}

export async function mpiRanks(options: MpiOptions = {}): Promise<CaseResult> {
  const mpirun = findExecutable("mpirun");
  if (mpirun === undefined) {
    throw new Error("mpirun is not installed: apt-get install openmpi-bin libopenmpi3");
  }
  const concurrency = options.concurrency ?? 8;
  const requests = options.requests ?? 60_000;
  const server = await startServerInWorker();
  try {
    const args = [
      ...["-m", "simple", "-u", server.addr, "--concurrency-range", String(concurrency)],
      ...["--warmup-request-count", String(requests / 10), "--request-count", String(requests)],
    ];
    const plain: number[] = [];
    const byRanks = new Map<number, number[]>(RANKS.map((n) => [n, []]));
    for (let round = 0; round < (options.rounds ?? 3); round++) {
      plain.push((await profile(args)).levels[0].throughput);
      for (const ranks of RANKS) byRanks.get(ranks)!.push(await sharded(mpirun, ranks, args));
    }
    const alone = median(plain);
    const rows: BenchRow[] = RANKS.map((ranks) => {
      const total = median(byRanks.get(ranks)!);
      return {
        name: `MPI --shard c=${concurrency}, ${ranks} rank${ranks > 1 ? "s" : ""}`,
        unit: "infer/s",
        inferperf: total,
        reference: alone,
        referenceName: "inferperf without MPI",
        ratio: total / alone,
        note: `${(total / ranks).toFixed(0)} infer/s per rank`,
      };
    });
    return {
      id: "mpi",
      title: "MPI ranks (--enable-mpi --shard) against one client",
      rows,
      notes: [
        `Reference server on a worker thread of the bench; ranks started by mpirun ` +
        `${MPIRUN_FLAGS.join(" ")} on the same ${navigator.hardwareConcurrency} cores.`,
        `Each run: ${requests} requests after ${requests / 10} of warmup at concurrency ` +
        `${concurrency} in total (split across the ranks); medians of ${plain.length} rounds.`,
        "1 rank against no MPI is the cost of the window exchange and merge on rank 0.",
      ],
      details: { concurrency, requests, plain, byRanks: Object.fromEntries(byRanks) },
    };
  } finally {
    await server.close();
  }
}

if (import.meta.main) console.log(JSON.stringify(await mpiRanks(), null, 2));
