/** `inferperf [profile]` and `inferperf demo`: one profiling run with its reports. */
import { buildProfileConfig } from "../cli/config.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { RawOptions } from "../cli/options.ts";
import { sendLagError } from "../load/levels.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { ReportSession } from "../profile/report_session.ts";
import { reportTargets } from "../profile/sinks/mod.ts";
import { checkOutputs } from "../report/output_file.ts";
import { runProfile } from "../profile/run.ts";
import { type CommandContext, type Outcome, printError } from "./outcome.ts";

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
 */
export async function profileCommand(
  config: ProfilePlan,
  context: CommandContext,
): Promise<Outcome> {
  checkOutputs(reportTargets(config));
  const interrupt = new Interrupt();
  const report = await ReportSession.open(config);
  const onSignal = () => {
    interrupt.trigger();
    if (interrupt.hard) {
      finishAfterFailure(report);
      context.exitNow("interrupted");
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    const outcome = await runProfile(config, { interrupt, events: report.events });
    report.finish(outcome.note);
  } catch (error) {
    finishAfterFailure(report);
    throw error;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
  const failed = report.failedRequests;
  if (failed > 0) printError(`${failed} requests failed; see "Failed requests" in the report`);
  const lagging = sendLagError(report.results, config);
  if (lagging) printError(lagging.message);
  if (interrupt.soft) return "interrupted";
  if (failed > 0) return "failed";
  return lagging ? "send_lag" : "ok";
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
    const openLoop = raw.has("request-rate-range") || raw.has("request-intervals");
    for (const [name, value] of DEMO_DEFAULTS) {
      // The demo's concurrency sweep would clash with an open-loop mode the user chose.
      if (!raw.has(name) && !(openLoop && name === "concurrency-range")) raw.set(name, value);
    }
    raw.set("url", server.addr);
    console.log(`Reference server running on ${server.addr} (simulated models, second thread)\n`);
    return await profileCommand(buildProfileConfig(raw), context);
  } finally {
    await server.close();
  }
}
