/**
 * inferperf entry point: parse -> validate -> run -> exit code. The only
 * place that turns outcomes and errors into exit codes: 0 ok, 1 usage (flags,
 * config, input data, report paths), 2 the load could not be held (the first
 * level did not stabilize, as perf_analyzer's 2, or, with --max-send-lag
 * given, an open-loop level fell behind schedule), 3 the server failed
 * (unreachable, lost, failed requests, a window without a valid request, as
 * perf_analyzer's 3), 4 a CI gate breached (--threshold,
 * --failed-request-threshold), 5 `inferperf compare` found a significant
 * regression beyond --fail-on-regression, 99 anything else (perf_analyzer's
 * catch-all), 130 interrupted with the partial results written.
 */
import denoConfig from "./deno.json" with { type: "json" };
import { buildProfileConfig, progressWanted } from "./lib/cli/config.ts";
import { parseArgv, type ParsedArgs, withConfigFile } from "./lib/cli/args.ts";
import type { RawOptions } from "./lib/cli/options.ts";
import { UsageError } from "./lib/types/errors.ts";
import { formatHelp } from "./lib/cli/help.ts";
import { findMissingPermission, formatMissingPermission } from "./lib/cli/permissions.ts";
import {
  type CommandContext,
  type Outcome,
  printError,
  printWarning,
} from "./lib/commands/outcome.ts";
import { demoCommand, profileCommand } from "./lib/commands/profile.ts";
import { reportCommand, sweepCommand } from "./lib/commands/sweep.ts";
import { NoValidRequestsError } from "./lib/measure/level.ts";
import { UnstableError } from "./lib/load/sweep.ts";
import { InputError } from "./lib/input/errors.ts";
import { MpiError } from "./lib/mpi/ffi.ts";
import {
  ConnectionError,
  InferError,
  ServerFeatureError,
  TimeoutError,
} from "./lib/protocol/errors.ts";
import { OutputError, WriteError } from "./lib/report/output_file.ts";
import { buildReportConfig, buildSweepConfig, CheckpointError } from "./lib/sweep/mod.ts";
// Only the check: the search (protobuf for config.pbtxt) loads when a search runs.
import { isEngineSearch, isSearch } from "./lib/search/kind.ts";

const EXIT_OK = 0;
const EXIT_USAGE = 1;
const EXIT_LOAD_NOT_HELD = 2;
const EXIT_SERVER_FAILED = 3;
const EXIT_GATE_BREACHED = 4;
/** inferperf compare --fail-on-regression: a significant regression beyond the bound. */
const EXIT_REGRESSION = 5;
const EXIT_OTHER = 99;

const EXIT_CODES: Record<Outcome, number> = {
  ok: EXIT_OK,
  failed: EXIT_SERVER_FAILED,
  send_lag: EXIT_LOAD_NOT_HELD,
  gate_breached: EXIT_GATE_BREACHED,
  interrupted: 130,
  regression: EXIT_REGRESSION,
};

const EXIT_CONTEXT: CommandContext = {
  exitNow: (outcome) => Deno.exit(EXIT_CODES[outcome]),
};

/** Errors users can act on, by exit code; anything else is a bug. */
const EXPECTED: ReadonlyArray<[number, ReadonlyArray<abstract new (...args: never[]) => Error>]> = [
  [EXIT_USAGE, [UsageError, InputError, OutputError, CheckpointError, MpiError]],
  [EXIT_LOAD_NOT_HELD, [UnstableError]],
  [EXIT_SERVER_FAILED, [NoValidRequestsError, ConnectionError, TimeoutError]],
  // The server refused what was asked (the model; a flag's feature it lacks): no flag value fixes it.
  [EXIT_OTHER, [InferError, ServerFeatureError, WriteError]],
];

function exitCodeOf(error: unknown): number {
  if (findMissingPermission(error)) return EXIT_USAGE;
  for (const [code, types] of EXPECTED) {
    if (types.some((type) => error instanceof type)) return code;
  }
  return EXIT_OTHER;
}

/**
 * Errors users cause (bad input, unreachable server, unwritable files) are
 * one line each; anything else is a bug and keeps its stack for the report.
 */
function printFailure(error: unknown): void {
  // First: a refusal often arrives wrapped (a ConnectionError's cause) or as worker message text.
  const missing = findMissingPermission(error);
  if (missing) return printError(formatMissingPermission(missing));
  if (EXPECTED.some(([, types]) => types.some((type) => error instanceof type))) {
    const { errors } = error as { errors?: unknown };
    const lines = Array.isArray(errors) ? errors.map(String) : [(error as Error).message];
    for (const line of lines) printError(line);
    return;
  }
  console.error(error instanceof Error ? error.stack ?? error.message : String(error));
  printError("this is a bug in inferperf; please report it with the command line and the above");
}

async function run(parsed: ParsedArgs, raw: RawOptions): Promise<Outcome> {
  const CONTEXT: CommandContext = { ...EXIT_CONTEXT, progress: progressWanted(raw) };
  switch (parsed.command) {
    case "serve": {
      // The reference server's command (its engine's checks) loads when it runs.
      const { serveCommand } = await import("./lib/commands/serve.ts");
      return await serveCommand(raw);
    }
    case "demo":
      return demoCommand(raw, CONTEXT);
    case "profile":
      if (isEngineSearch(raw)) {
        const { engineSearchCommand } = await import("./lib/commands/engine_search.ts");
        return await engineSearchCommand(raw, CONTEXT);
      }
      if (isSearch(raw)) {
        const { searchCommand } = await import("./lib/commands/search.ts");
        return await searchCommand(raw, CONTEXT);
      }
      return raw.has("profile-models")
        ? sweepCommand(buildSweepConfig(raw), CONTEXT)
        : profileCommand(buildProfileConfig(raw, { warn: printWarning }), CONTEXT);
    case "report": {
      const { engineReportCommand } = await import("./lib/commands/engine_search.ts");
      const { searchReportCommand } = await import("./lib/commands/search.ts");
      return (await engineReportCommand(raw)) ?? (await searchReportCommand(raw)) ??
        reportCommand(buildReportConfig(raw));
    }
    case "compare": {
      const { compareCommand } = await import("./lib/commands/compare.ts");
      const failOnRegression = raw.get("fail-on-regression");
      return await compareCommand({
        files: parsed.operands,
        html: raw.get("html") as string | undefined,
        ...(failOnRegression === undefined ? {} : { failOnRegression: Number(failOnRegression) }),
        confidenceLevel: Number(raw.get("confidence-level") ?? 0.95),
      });
    }
    case "input-template": {
      const { inputTemplateCommand } = await import("./lib/commands/input_template.ts");
      return await inputTemplateCommand(buildProfileConfig(raw, { warn: printWarning }), {
        output: raw.get("output") as string | undefined,
      });
    }
    case "merge": {
      // Loaded for merges only, like the histogram library the merge reads.
      const { mergeCommand } = await import("./lib/commands/merge.ts");
      return await mergeCommand({
        output: raw.get("output") as string | undefined,
        runs: parsed.operands,
      });
    }
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseArgv(argv);
    for (const warning of parsed.warnings) printWarning(warning);
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
    return EXIT_CODES[await run(parsed, raw)];
  } catch (error) {
    printFailure(error);
    if (error instanceof UsageError) console.error('Run "inferperf --help" for the options.');
    return exitCodeOf(error);
  }
}

if (import.meta.main) {
  // --workers N: the load threads run this same module (lib/profile/workers/pool.ts).
  if ("WorkerGlobalScope" in globalThis) {
    (await import("./lib/profile/workers/worker.ts")).serveLoadWorker();
  } else {
    const code = await main(Deno.args);
    // Deno writes the V8 code cache of the module graph when the event loop first runs or this
    // module's evaluation completes, never if Deno.exit ends it before: `--version` exited so,
    // and each such start compiled the whole program again (the bundle's 5.6 MB: ~25 ms). So the
    // exit comes on the next turn, where nothing left running can change the outcome main
    // reported (a late rejection included).
    addEventListener("unhandledrejection", (event) => event.preventDefault());
    setTimeout(() => Deno.exit(code), 0);
  }
}
