/** `inferperf [profile]` and `inferperf demo`: one profiling run with its reports. */
import { buildProfileConfig } from "../cli/config.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { RawOptions } from "../cli/options.ts";
import { behindScheduleMessage } from "../load/levels.ts";
import { loadMode } from "../load/modes/mod.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { CapacityCheckpoint } from "../profile/capacity.ts";
import { ReportSession } from "../profile/report_session.ts";
import { exportedExperiment } from "../profile/sinks/export.ts";
import { reportTargets } from "../profile/sinks/mod.ts";
import { checkOutputs } from "../report/output_file.ts";
import { type RunEvents, runProfile } from "../profile/run.ts";
import { reportedWindows } from "../report/components.ts";
import type { MpiSession } from "../mpi/session.ts";
import type { CodedWindow } from "../mpi/window_codec.ts";
import { countWarnings } from "../measure/usage_check.ts";
import {
  type CommandContext,
  type Outcome,
  printError,
  printWarning,
  writeOnCtrlC,
} from "./outcome.ts";

/** Options `inferperf demo` sets unless the user gives them. */
const DEMO_DEFAULTS: Array<[string, string]> = [
  ["model-name", "slow"],
  ["concurrency-range", "1:4"],
  ["measurement-interval", "1000"],
];

/**
 * Ctrl-C once: the current window finishes and the reports are written;
 * twice: what exists is written and the process ends at once. A run that
 * throws still writes what it measured before the error propagates.
 *
 * --enable-mpi: this process is one rank of a job. A rank that fails exits
 * without ending MPI, so that mpirun ends the job; the other ranks then get
 * SIGTERM and write the levels they finished.
 */
export async function profileCommand(
  config: ProfilePlan,
  context: CommandContext,
): Promise<Outcome> {
  if (config.mpi === undefined) return await profileRank(config, { context });
  // Loaded for --enable-mpi only: the FFI binding, the window codec and the merge.
  const { MpiSession } = await import("../mpi/session.ts");
  let level = "";
  const mpi: MpiSession = await MpiSession.open({
    ...config.mpi,
    // -v, as perf_analyzer: the line scripts wait for, printed by every reporting rank.
    onStable: () => {
      if (config.verbose > 0 && mpi.reports) {
        console.log(`${ALL_STABLE} (${mpi.comm.size} ranks, ${level})`);
      }
    },
  });
  const outcome = await profileRank(config, {
    context,
    mpi,
    onLevel: (value) => level = `${loadMode(config.loadMode).reportAs.replace("_", " ")} ${value}`,
  });
  await mpi.close();
  return outcome;
}

/** perf_analyzer's words once every rank of an MPI job is stable at a level. */
const ALL_STABLE = "All models on all MPI ranks are stable";

async function profileRank(
  config: ProfilePlan,
  options: { context: CommandContext; mpi?: MpiSession; onLevel?: (value: number) => void },
): Promise<Outcome> {
  const { context, mpi, onLevel } = options;
  if (mpi && !mpi.reports) return await shardRank(config, mpi);
  // Repeat runs and sweeps load their reports (the summary's histograms) when asked for.
  if (config.numProfileRuns > 1) {
    const { profileRunsCommand } = await import("./profile_runs.ts");
    return await profileRunsCommand(config, context);
  }
  if (config.sweepSize !== undefined) {
    const { autoSweepCommand } = await import("./auto_sweep.ts");
    return await autoSweepCommand(config, context);
  }
  const search = config.capacity;
  checkOutputs([
    ...reportTargets(config),
    ...(search ? [{ path: search.checkpoint, flag: "--search-checkpoint" }] : []),
  ]);
  const checkpoint = search && CapacityCheckpoint.open(config);
  if (checkpoint && checkpoint.stored > 0) {
    console.log(
      `Resuming the capacity search from ${checkpoint.file} (levels measured: ${checkpoint.stored})\n`,
    );
  }
  const interrupt = new Interrupt();
  const report = await ReportSession.open(config);
  const onTerm = () => {
    printError(`MPI rank ${mpi!.comm.rank}: ${JOB_ENDING}; the finished levels are written`);
    finishAfterFailure(report);
    context.exitNow("interrupted");
  };
  const removeCtrlC = writeOnCtrlC(interrupt, {
    context,
    write: () => finishAfterFailure(report),
  });
  if (mpi) Deno.addSignalListener("SIGTERM", onTerm);
  let breaches: string[] = [];
  let searched = false;
  try {
    const outcome = await runProfile(config, {
      interrupt,
      events: mpi
        ? mpiEvents(report.events, { mpi, verbose: config.verbose, onLevel })
        : report.events,
      ...(mpi ? { rank: { coordinator: mpi.coordinator, part: mpi.part } } : {}),
      ...(checkpoint ? { checkpoint } : {}),
    });
    report.finish(outcome.note, outcome.capacity ? { capacity: outcome.capacity } : {});
    breaches = outcome.breaches ?? [];
    searched = outcome.capacity !== undefined;
    if (mpi?.part && config.profileExportFile) await mpi.gatherExports(config.profileExportFile);
  } catch (error) {
    finishAfterFailure(report);
    throw error;
  } finally {
    removeCtrlC();
    if (mpi) Deno.removeSignalListener("SIGTERM", onTerm);
  }
  const failed = report.failedRequests;
  // A search's failed requests fail its levels: they are part of its answer.
  if (failed > 0) {
    (searched ? printWarning : printError)(
      `${failed} requests failed; see "Failed requests" in the report`,
    );
  }
  const lagging = behindScheduleMessage(report.results, config);
  // A search's late levels fail (judged so); its answer stands.
  const lagFails = config.sendLagFails && !searched;
  if (lagging) (lagFails ? printError : printWarning)(lagging);
  const chatTemplate = config.applyChatTemplate;
  for (const warning of countWarnings(report.results, { chatTemplate })) printWarning(warning);
  for (const breach of breaches) printError(breach);
  if (breaches.length > 0) return "gate_breached";
  if (interrupt.soft) return "interrupted";
  if (failed > 0 && !searched) return "failed";
  return lagging && lagFails ? "send_lag" : "ok";
}

/** What mpirun's SIGTERM to the surviving ranks means. */
const JOB_ENDING =
  "the MPI job is ending (another rank failed or was killed, or mpirun was stopped)";

/**
 * --shard, ranks other than 0: they send their part and judge the merged
 * windows; rank 0 reports. With --profile-export-file each records its
 * requests into a temporary export of its own, which rank 0 merges.
 */
async function shardRank(config: ProfilePlan, mpi: MpiSession): Promise<Outcome> {
  const interrupt = new Interrupt();
  const exporter = config.profileExportFile === undefined
    ? undefined
    : new (await import("../report/export.ts")).ProfileExportWriter(await Deno.makeTempFile());
  const onSignal = () => interrupt.trigger();
  const onTerm = () => {
    printError(`MPI rank ${mpi.comm.rank}: ${JOB_ENDING}`);
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onTerm);
  try {
    await runProfile(config, {
      interrupt,
      rank: { coordinator: mpi.coordinator, part: mpi.part },
      ...(exporter
        ? {
          events: {
            levelStart: (value) => {
              const mode = loadMode(config.loadMode).reportAs;
              const experiment = exportedExperiment(config, { mode, value });
              exporter.beginExperiment(experiment.mode, experiment.value, {
                wholeRun: experiment.wholeRun,
              });
            },
            // The requests each window counted are the ones exported.
            window: (window) => exporter.addWindow(window),
            requests: exporter,
          },
        }
        : {}),
    });
    if (exporter) {
      exporter.finish({
        version: "",
        serviceKind: config.serviceKind,
        endpoint: config.exportEndpoint,
      });
      await mpi.gatherExports(exporter.path);
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onTerm);
  }
  return interrupt.soft ? "interrupted" : "ok";
}

/** A reporting rank's events: the job described first, then (--shard) each level's ranks. */
function mpiEvents(
  events: RunEvents,
  options: { mpi: MpiSession; verbose: number; onLevel?: (value: number) => void },
): RunEvents {
  const { mpi } = options;
  return {
    ...events,
    levelStart: (value) => {
      options.onLevel?.(value);
      events.levelStart?.(value);
    },
    ready: (info) => {
      console.log(mpi.describe());
      if (options.verbose > 0) console.log(mpi.describeClocks());
      console.log();
      events.ready?.(info);
    },
    level: (result) => {
      events.level?.(result);
      const shards = reportedWindows(result).flatMap((w) => {
        const figures = (w as CodedWindow).shards;
        return figures ? [figures] : [];
      });
      if (shards.length > 0) console.log(mpi.describeShards(shards));
    },
  };
}

/** Writes what was measured when the run is ending anyway; a failed write is printed, not thrown. */
function finishAfterFailure(report: ReportSession): void {
  try {
    report.finish();
  } catch (error) {
    printError((error as Error).message);
  }
}

/** Profiles the built-in reference server, run on a second thread. */
export async function demoCommand(raw: RawOptions, context: CommandContext): Promise<Outcome> {
  // The reference server (YAML, protobuf, HTTP/2) loads only for the commands that run it.
  const { startServerInWorker } = await import("../server/mod.ts");
  const server = await startServerInWorker();
  try {
    const openLoop = raw.has("request-rate-range") || raw.has("request-intervals") ||
      raw.has("sweep-size");
    for (const [name, value] of DEMO_DEFAULTS) {
      // The demo's concurrency sweep would clash with an open-loop mode the user chose.
      if (!raw.has(name) && !(openLoop && name === "concurrency-range")) raw.set(name, value);
    }
    raw.set("url", server.addr);
    console.log(`Reference server running on ${server.addr} (simulated models, second thread)\n`);
    return await profileCommand(buildProfileConfig(raw, { warn: printWarning }), context);
  } finally {
    await server.close();
  }
}
