/** Sweeps over models and parameters with checkpoints, and reports from checkpoints. */
import denoConfig from "../../deno.json" with { type: "json" };
import { Interrupt } from "../measure/interrupt.ts";
import { renderSweepHtmlReport, type SweepHtmlContext } from "../sweep/html.ts";
import {
  CheckpointError,
  CheckpointStore,
  formatPointResult,
  formatPointStart,
  formatSweepCsv,
  formatSweepSummary,
  type Goals,
  goalsText,
  parseGoals,
  type PointFailure,
  type PointRecord,
  type ReportConfig,
  runSweep,
  type SweepConfig,
} from "../sweep/mod.ts";
import { checkOutputs, writeAll, writeFileAtomic } from "../report/output_file.ts";
import { Progress } from "../profile/progress.ts";
import { type CommandContext, type Outcome, printError } from "./outcome.ts";

/** The sweep's CSV and HTML, checked before anything is measured. */
function checkReportFiles(options: { csvFile: string; htmlFile: string }): void {
  checkOutputs([
    { path: options.csvFile, flag: "-f/--latency-report-file" },
    { path: options.htmlFile, flag: "--report-html" },
  ]);
}

/**
 * Prints a sweep's summary and writes its CSV and HTML report; the outcome
 * says whether everything was measured.
 */
function finishSweep(
  records: readonly PointRecord[],
  options: {
    goals: Goals;
    csvFile: string;
    htmlFile: string;
    failures?: readonly PointFailure[];
    html: Omit<SweepHtmlContext, "goals" | "failures" | "version">;
  },
): Outcome {
  console.log(formatSweepSummary(records, options));
  if (records.length > 0) {
    writeAll([
      () => writeFileAtomic(options.csvFile, formatSweepCsv(records, options)),
      () =>
        writeFileAtomic(
          options.htmlFile,
          renderSweepHtmlReport(records, {
            ...options,
            ...options.html,
            version: denoConfig.version,
          }),
        ),
    ]);
    console.log(`Results written to ${options.csvFile} and ${options.htmlFile}`);
  }
  const failedRequests = records.reduce((n, r) => n + r.result.client.errorCount, 0);
  if (failedRequests > 0) printError(`${failedRequests} requests failed; see the Status column`);
  const failures = options.failures?.length ?? 0;
  if (failures > 0) {
    printError(`${failures} of the points could not be measured; see "Failed points"`);
  }
  return failedRequests > 0 || failures > 0 ? "failed" : "ok";
}

/**
 * Ctrl-C for a run with checkpoints (a sweep, a search): once, the running
 * point finishes, is saved, and the run stops (`interrupt`); twice, a
 * warning; three times, the checkpoint is saved and `stop` ends at once.
 */
export function saveOnCtrlC(
  store: CheckpointStore,
  options: { stop: () => void },
): { interrupt: Interrupt; remove: () => void } {
  const interrupt = new Interrupt();
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals === 1) {
      interrupt.trigger();
      console.error("Finishing the running point, then saving and stopping");
    } else if (signals === 2) {
      console.error("Press Ctrl-C once more to stop at once (the running point is lost)");
    } else {
      try {
        store.save();
      } catch (error) {
        printError((error as Error).message);
      }
      console.error(`Stopped; measured points are in ${store.latest ?? "no checkpoint yet"}`);
      options.stop();
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  return { interrupt, remove: () => Deno.removeSignalListener("SIGINT", onSignal) };
}

/**
 * A sweep with checkpoints. Ctrl-C once: the running point finishes, is
 * saved, and the sweep stops; three times: save and exit at once.
 */
export async function sweepCommand(
  config: SweepConfig,
  context: CommandContext,
): Promise<Outcome> {
  const directory = config.checkpointDirectory;
  checkOutputs([{ path: directory, flag: "--checkpoint-directory", directory: true }]);
  // The default CSV and HTML go into the checkpoint directory, so it must exist to check them.
  Deno.mkdirSync(directory, { recursive: true });
  checkReportFiles(config);
  const store = CheckpointStore.open(config.checkpointDirectory);
  store.use(config.settings, goalsText(config.goals));
  console.log(
    store.loaded
      ? `Resuming from checkpoint ${store.loaded} (points measured: ${store.records.size})\n`
      : `No checkpoint in "${config.checkpointDirectory}": starting a fresh sweep\n`,
  );
  const ctrlC = saveOnCtrlC(store, { stop: () => context.exitNow("interrupted") });
  const progress = new Progress({ enabled: context.progress ?? true });
  const say = (text: string) => progress.print(text);
  try {
    const outcome = await runSweep(config, {
      store,
      interrupt: ctrlC.interrupt,
      events: {
        pointStart: (point, info) => {
          say(formatPointStart(point, info).trimEnd());
          progress.step({
            ...info,
            label: `${point.model}, batch size ${point.batchSize}`,
            mode: point.mode,
          });
        },
        point: (record) =>
          say(formatPointResult(record, { percentile: config.percentile }).trimEnd()),
        pointFailed: (_, error) => say(`    failed: ${error.message}`),
        seriesEnd: (_, reason) => say(`    ${reason}`),
      },
      pointEvents: progress.events(),
    });
    progress.close();
    console.log(
      outcome.interrupted
        ? `\nInterrupted: measured points are in ${store.latest}; run the same command again to resume.\n`
        : `\nSweep complete (points measured now: ${outcome.measured}, from the checkpoint: ${outcome.resumed}).\n`,
    );
    const finished = finishSweep(outcome.records, {
      ...config,
      failures: outcome.failures,
      html: {
        ...(config.percentile === undefined ? {} : { percentile: config.percentile }),
        ...(store.latest ? { source: store.latest } : {}),
        ...(outcome.interrupted
          ? {
            note:
              "Interrupted before the end of the sweep: the points not measured yet are missing.",
          }
          : {}),
      },
    });
    return outcome.interrupted ? "interrupted" : finished;
  } finally {
    progress.close();
    ctrlC.remove();
  }
}

/** `inferperf report`: the summary and CSV of the latest checkpoint, without measuring. */
export function reportCommand(config: ReportConfig): Outcome {
  const store = CheckpointStore.open(config.checkpointDirectory);
  if (!store.loaded || !store.storedGoals) {
    throw new CheckpointError(
      `No checkpoint in "${config.checkpointDirectory}": sweeps (inferperf profile --profile-models ...) write them`,
      config.checkpointDirectory,
    );
  }
  const goals = parseGoals(
    config.objective ?? store.storedGoals.objective,
    config.constraints ?? store.storedGoals.constraints,
  );
  checkReportFiles(config);
  console.log(`Checkpoint ${store.loaded}\n`);
  const percentile = store.storedSettings?.percentile;
  return finishSweep([...store.records.values()], {
    goals,
    csvFile: config.csvFile,
    htmlFile: config.htmlFile,
    html: {
      source: store.loaded,
      ...(typeof percentile === "number" ? { percentile } : {}),
    },
  });
}
