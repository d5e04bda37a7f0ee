/**
 * inferperf entry point: parse -> validate -> run -> exit code. The only
 * place that turns outcomes and errors into exit codes (perf_analyzer's: 0 ok,
 * 2 first level unstable, 3 a window without valid requests, 99 anything else;
 * beyond them, 4 when an open-loop level sent too late to be trusted and 130
 * after a second Ctrl-C).
 */
import denoConfig from "./deno.json" with { type: "json" };
import {
  buildProfileConfig,
  parseArgv,
  type RawOptions,
  UsageError,
  withConfigFile,
} from "./lib/cli/config.ts";
import { formatHelp } from "./lib/cli/help.ts";
import type { Command } from "./lib/cli/options.ts";
import { findMissingPermission, formatMissingPermission } from "./lib/cli/permissions.ts";
import { type CommandContext, type Outcome, printError } from "./lib/commands/outcome.ts";
import { demoCommand, profileCommand } from "./lib/commands/profile.ts";
import { serveCommand } from "./lib/commands/serve.ts";
import { reportCommand, sweepCommand } from "./lib/commands/sweep.ts";
import { NoValidRequestsError } from "./lib/measure/level.ts";
import { UnstableError } from "./lib/load/sweep.ts";
import { InputError } from "./lib/profile/inputs.ts";
import {
  ConnectionError,
  InferError,
  ServerFeatureError,
  TimeoutError,
} from "./lib/protocol/errors.ts";
import { buildReportConfig, buildSweepConfig, CheckpointError } from "./lib/sweep/mod.ts";

const EXIT_OK = 0;
const EXIT_UNSTABLE = 2;
const EXIT_NO_VALID_REQUESTS = 3;
const EXIT_ERROR = 99;

const EXIT_CODES: Record<Outcome, number> = {
  ok: EXIT_OK,
  failed: EXIT_ERROR,
  send_lag: 4,
  interrupted: 130,
};

const CONTEXT: CommandContext = {
  exitNow: (outcome) => Deno.exit(EXIT_CODES[outcome]),
};

function exitCodeOf(error: unknown): number {
  if (error instanceof UnstableError) return EXIT_UNSTABLE;
  if (error instanceof NoValidRequestsError) return EXIT_NO_VALID_REQUESTS;
  return EXIT_ERROR;
}

/** Errors users cause (bad input, unreachable server) are one line; others keep their stack for bug reports. */
function describe(error: unknown): string {
  // First: a refusal often arrives wrapped (a ConnectionError's cause) or as worker message text.
  const missing = findMissingPermission(error);
  if (missing) return formatMissingPermission(missing);
  const expected = [
    UsageError,
    InputError,
    ConnectionError,
    InferError,
    TimeoutError,
    UnstableError,
    NoValidRequestsError,
    CheckpointError,
    ServerFeatureError,
  ];
  if (expected.some((type) => error instanceof type)) return (error as Error).message;
  return error instanceof Error ? error.stack ?? error.message : String(error);
}

function run(command: Command, raw: RawOptions): Promise<Outcome> {
  switch (command) {
    case "serve":
      return serveCommand(raw);
    case "demo":
      return demoCommand(raw, CONTEXT);
    case "profile":
      return raw.has("profile-models")
        ? sweepCommand(buildSweepConfig(raw), CONTEXT)
        : profileCommand(buildProfileConfig(raw), CONTEXT);
    case "report":
      return Promise.resolve(reportCommand(buildReportConfig(raw)));
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseArgv(argv);
    if (parsed.action === "help") {
      console.log(formatHelp());
      return EXIT_OK;
    }
    if (parsed.action === "version") {
      console.log(
        `inferperf ${denoConfig.version} (deno ${Deno.version.deno}, v8 ${Deno.version.v8})`,
      );
      return EXIT_OK;
    }
    const raw = await withConfigFile(parsed);
    return EXIT_CODES[await run(parsed.command, raw)];
  } catch (error) {
    printError(describe(error));
    if (error instanceof UsageError) console.error('Run "inferperf --help" for the options.');
    return exitCodeOf(error);
  }
}

if (import.meta.main) {
  // --workers N: the load threads run this same module (lib/profile/workers/pool.ts).
  if ("WorkerGlobalScope" in globalThis) {
    (await import("./lib/profile/workers/worker.ts")).serveLoadWorker();
  } else Deno.exit(await main(Deno.args));
}
