import { printableLine } from "../report/format.ts";
import type { Interrupt } from "../measure/interrupt.ts";

/**
 * How a command ended. Commands return an Outcome (or throw); only main.ts
 * turns outcomes and errors into exit codes.
 */
export type Outcome =
  /** Everything was measured and every request succeeded. */
  | "ok"
  /** Reports were written, but requests (or sweep points) failed. */
  | "failed"
  /** An open-loop level fell behind schedule and --max-send-lag asked to fail then. */
  | "send_lag"
  /** A CI gate breached (--threshold, --failed-request-threshold): reports were written. */
  | "gate_breached"
  /** Ctrl-C: what was measured was written, the rest was abandoned. */
  | "interrupted"
  /** inferperf compare --fail-on-regression: a significant regression beyond the bound. */
  | "regression";

export interface CommandContext {
  /** Ends the process at once (a hard interrupt); main.ts picks the exit code. */
  exitNow(outcome: Outcome): never;
  /** Show where a long command is (lib/profile/progress.ts); false with --no-progress. */
  progress?: boolean;
}

/** One line on stderr; a message may carry a server's text, so it is made printable. */
export function printError(message: string): void {
  console.error(`error: ${printableLine(message)}`);
}

/** One line on stderr about results that stand but need care, or what was ignored. */
export function printWarning(message: string): void {
  console.error(`warning: ${printableLine(message)}`);
}

/**
 * Ctrl-C triggers `interrupt` (the running level finishes); a second one
 * makes it hard: `write` saves what was measured and the process ends.
 * Returns the handler's remover.
 */
export function writeOnCtrlC(
  interrupt: Interrupt,
  options: { context: CommandContext; write: () => void },
): () => void {
  const onSignal = () => {
    interrupt.trigger();
    if (interrupt.hard) {
      options.write();
      options.context.exitNow("interrupted");
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  return () => Deno.removeSignalListener("SIGINT", onSignal);
}
