/**
 * inferperf entry point: parse -> validate -> run -> exit code. The only
 * place that turns errors into exit codes (perf_analyzer's: 0 ok, 2 first
 * level unstable, 3 a window without valid requests, 99 anything else).
 */
import denoConfig from "./deno.json" with { type: "json" };
import {
  buildProfileConfig,
  buildServeConfig,
  formatHelp,
  parseArgv,
  type ProfileConfig,
  type RawOptions,
  UsageError,
} from "./lib/cli/mod.ts";
import { NoValidRequestsError } from "./lib/measure/level.ts";
import { UnstableError } from "./lib/load/sweep.ts";
import { InputError } from "./lib/profile/inputs.ts";
import { Interrupt } from "./lib/profile/interrupt.ts";
import { ReportSession } from "./lib/profile/report_session.ts";
import { runProfile } from "./lib/profile/run.ts";
import { ConnectionError, InferError, TimeoutError } from "./lib/protocol/errors.ts";
import { loadModelConfig, startServer, startServerInWorker } from "./lib/server/mod.ts";

const EXIT_OK = 0;
const EXIT_UNSTABLE = 2;
const EXIT_NO_VALID_REQUESTS = 3;
const EXIT_ERROR = 99;
const EXIT_HARD_INTERRUPT = 130;

/** Options `inferperf demo` sets unless the user gives them. */
const DEMO_DEFAULTS: Array<[string, string]> = [
  ["model-name", "slow"],
  ["concurrency-range", "1:4"],
  ["measurement-interval", "1000"],
];

function printError(message: string): void {
  console.error(`error: ${message}`);
}

function exitCodeOf(error: unknown): number {
  if (error instanceof UnstableError) return EXIT_UNSTABLE;
  if (error instanceof NoValidRequestsError) return EXIT_NO_VALID_REQUESTS;
  return EXIT_ERROR;
}

/** Errors users cause (bad input, unreachable server) are one line; others keep their stack for bug reports. */
function describe(error: unknown): string {
  const expected = [
    UsageError,
    InputError,
    ConnectionError,
    InferError,
    TimeoutError,
    UnstableError,
    NoValidRequestsError,
  ];
  if (expected.some((type) => error instanceof type)) return (error as Error).message;
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return error.message;
  }
  return error instanceof Error ? error.stack ?? error.message : String(error);
}

async function profile(config: ProfileConfig): Promise<number> {
  const interrupt = new Interrupt();
  const report = new ReportSession(config);
  const onSignal = () => {
    interrupt.trigger();
    if (interrupt.hard) {
      report.finish();
      Deno.exit(EXIT_HARD_INTERRUPT);
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    const outcome = await runProfile(config, { interrupt, events: report.events });
    report.finish(outcome.note);
  } catch (error) {
    report.finish();
    printError(describe(error));
    return exitCodeOf(error);
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
  const failed = report.failedRequests;
  if (failed > 0) {
    printError(`${failed} requests failed; see "Failed requests" in the report`);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

async function serve(raw: RawOptions): Promise<number> {
  const config = buildServeConfig(raw);
  const models = config.models ? await loadModelConfig(config.models) : undefined;
  const server = await startServer({
    ...(models ? { models } : {}),
    host: config.host,
    httpPort: config.httpPort,
    metricsPort: config.metricsPort,
  });
  console.log(
    `Serving KServe v2 HTTP on ${server.addr}, metrics on ${config.host}:${server.metricsPort}/metrics (Ctrl-C to stop)`,
  );
  await new Promise<void>((resolve) => {
    Deno.addSignalListener("SIGINT", resolve);
    Deno.addSignalListener("SIGTERM", resolve);
  });
  await server.close();
  return EXIT_OK;
}

async function demo(raw: RawOptions): Promise<number> {
  const server = await startServerInWorker();
  try {
    for (const [name, value] of DEMO_DEFAULTS) if (!raw.has(name)) raw.set(name, value);
    raw.set("url", server.addr);
    console.log(`Reference server running on ${server.addr} (simulated models, second thread)\n`);
    return await profile(buildProfileConfig(raw));
  } finally {
    await server.close();
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
    switch (parsed.command) {
      case "serve":
        return await serve(parsed.options);
      case "demo":
        return await demo(parsed.options);
      case "profile":
        return await profile(buildProfileConfig(parsed.options));
    }
  } catch (error) {
    printError(describe(error));
    if (error instanceof UsageError) console.error('Run "inferperf --help" for the options.');
    return exitCodeOf(error);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
