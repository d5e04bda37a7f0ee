/**
 * Commands made of several runs (--num-profile-runs, --sweep-size): each
 * run reports on the console as a single run does; the files are written
 * once at the end, from all of them, by a session without the console.
 */
import { UnstableError } from "../load/sweep.ts";
import type { Interrupt } from "../measure/interrupt.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { ProgressStep } from "../profile/progress.ts";
import { ReportSession } from "../profile/report_session.ts";
import { runProfile } from "../profile/run.ts";
import type { RunEnd, RunTarget } from "../profile/sinks/mod.ts";
import type { LevelResult } from "../types/results.ts";
import { type CommandContext, printError, writeOnCtrlC } from "./outcome.ts";

/** What one run measured. */
export interface ConsoleRun {
  results: LevelResult[];
  target?: RunTarget;
  note?: string;
  failedRequests: number;
}

/**
 * Runs `config` with the console its only output (the files are the
 * caller's). `keepUnstable`: a first level that did not stabilize is
 * reported and returned (with the error's message as the note) instead of
 * thrown.
 */
export async function consoleRun(
  config: ProfilePlan,
  options: {
    interrupt: Interrupt;
    histograms: boolean;
    keepUnstable?: boolean;
    /** The progress line's step (run k of n). */
    step?: ProgressStep;
  },
): Promise<ConsoleRun> {
  const plan: ProfilePlan = {
    ...config,
    latencyReportFile: undefined,
    llmCsv: undefined,
    summaryJson: undefined,
    reportHtml: undefined,
  };
  const session = await ReportSession.open(plan, {
    histograms: options.histograms,
    ...(options.step ? { step: options.step } : {}),
  });
  let note: string | undefined;
  try {
    note = (await runProfile(plan, { interrupt: options.interrupt, events: session.events })).note;
  } catch (error) {
    if (!(options.keepUnstable && error instanceof UnstableError)) {
      session.finish();
      throw error;
    }
    session.events.level?.(error.result);
    note = error.message;
  }
  session.finish(note);
  const target = session.target;
  return {
    results: [...session.results],
    ...(target ? { target } : {}),
    ...(note ? { note } : {}),
    failedRequests: session.failedRequests,
  };
}

/**
 * The files of several runs: `finish(end)` writes them once (idempotent); a
 * second Ctrl-C writes what `end()` holds and exits. `close()` removes the
 * signal handler.
 */
export async function openRunsOutputs(
  config: ProfilePlan,
  options: { interrupt: Interrupt; context: CommandContext; end: () => RunEnd },
): Promise<{ finish: () => void; finishQuietly: () => void; close: () => void }> {
  const outputs = await ReportSession.open(config, { console: false });
  const finish = () => outputs.finishWith(options.end());
  /** Writes what was measured when the runs end anyway; a failed write is printed, not thrown. */
  const finishQuietly = () => {
    try {
      finish();
    } catch (error) {
      printError((error as Error).message);
    }
  };
  const close = writeOnCtrlC(options.interrupt, { context: options.context, write: finishQuietly });
  return { finish, finishQuietly, close };
}
