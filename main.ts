/**
 * inferperf entry point: parse -> validate -> run -> exit code. The only
 * place that turns errors into exit codes (perf_analyzer's: 0 ok, 2 first
 * level unstable, 3 a window without valid requests, 99 anything else; beyond
 * them, 4 when an open-loop level sent too late to be trusted).
 */
import denoConfig from "./deno.json" with { type: "json" };
import {
  buildProfileConfig,
  buildServeConfig,
  parseArgv,
  type ProfileConfig,
  type RawOptions,
  UsageError,
  withConfigFile,
} from "./lib/cli/config.ts";
import { formatHelp } from "./lib/cli/help.ts";
import { findMissingPermission, formatMissingPermission } from "./lib/cli/permissions.ts";
import { NoValidRequestsError } from "./lib/measure/level.ts";
import { UnstableError } from "./lib/load/sweep.ts";
import { InputError } from "./lib/profile/inputs.ts";
import { Interrupt } from "./lib/profile/interrupt.ts";
import { ReportSession } from "./lib/profile/report_session.ts";
import { renderSweepHtmlReport, type SweepHtmlContext } from "./lib/report/sweep_html.ts";
import { runProfile } from "./lib/profile/run.ts";
import { SendLagError, sendLagError } from "./lib/profile/loads.ts";
import { ConnectionError, InferError, TimeoutError } from "./lib/protocol/errors.ts";
import {
  buildReportConfig,
  buildSweepConfig,
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
} from "./lib/sweep/mod.ts";

const EXIT_OK = 0;
const EXIT_UNSTABLE = 2;
const EXIT_NO_VALID_REQUESTS = 3;
/** Beyond perf_analyzer: an open-loop level's send lag exceeded --max-send-lag. */
const EXIT_SEND_LAG = 4;
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
  if (error instanceof SendLagError) return EXIT_SEND_LAG;
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
  ];
  if (expected.some((type) => error instanceof type)) return (error as Error).message;
  return error instanceof Error ? error.stack ?? error.message : String(error);
}

async function profile(config: ProfileConfig): Promise<number> {
  const interrupt = new Interrupt();
  const report = await ReportSession.open(config);
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
  const lagging = sendLagError(report.results, config);
  if (lagging) {
    printError(lagging.message);
    return exitCodeOf(lagging);
  }
  return EXIT_OK;
}

/**
 * Prints a sweep's summary and writes its CSV and HTML report; the exit code
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
): number {
  console.log(formatSweepSummary(records, options));
  if (records.length > 0) {
    Deno.writeTextFileSync(options.csvFile, formatSweepCsv(records, options));
    Deno.writeTextFileSync(
      options.htmlFile,
      renderSweepHtmlReport(records, { ...options, ...options.html, version: denoConfig.version }),
    );
    console.log(`Results written to ${options.csvFile} and ${options.htmlFile}`);
  }
  const failedRequests = records.reduce((n, r) => n + r.result.client.errorCount, 0);
  if (failedRequests > 0) printError(`${failedRequests} requests failed; see the Status column`);
  const failures = options.failures?.length ?? 0;
  if (failures > 0) {
    printError(`${failures} of the points could not be measured; see "Failed points"`);
  }
  return failedRequests > 0 || failures > 0 ? EXIT_ERROR : EXIT_OK;
}

/**
 * A sweep with checkpoints. Ctrl-C once: the running point finishes, is
 * saved, and the sweep stops; three times: save and exit at once.
 */
async function sweep(config: SweepConfig): Promise<number> {
  const store = CheckpointStore.open(config.checkpointDirectory);
  store.use(config.settings, goalsText(config.goals));
  console.log(
    store.loaded
      ? `Resuming from checkpoint ${store.loaded} (points measured: ${store.records.size})\n`
      : `No checkpoint in "${config.checkpointDirectory}": starting a fresh sweep\n`,
  );
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
        printError(describe(error));
      }
      console.error(`Stopped; measured points are in ${store.latest ?? "no checkpoint yet"}`);
      Deno.exit(EXIT_HARD_INTERRUPT);
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    const outcome = await runSweep(config, {
      store,
      interrupt,
      events: {
        pointStart: (point, info) => console.log(formatPointStart(point, info).trimEnd()),
        point: (record) =>
          console.log(formatPointResult(record, { percentile: config.percentile }).trimEnd()),
        pointFailed: (_, error) => console.log(`    failed: ${error.message}`),
        seriesEnd: (_, reason) => console.log(`    ${reason}`),
      },
    });
    console.log(
      outcome.interrupted
        ? `\nInterrupted: measured points are in ${store.latest}; run the same command again to resume.\n`
        : `\nSweep complete (points measured now: ${outcome.measured}, from the checkpoint: ${outcome.resumed}).\n`,
    );
    return finishSweep(outcome.records, {
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
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
}

/** `inferperf report`: the summary and CSV of the latest checkpoint, without measuring. */
function report(config: ReportConfig): number {
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

async function serve(raw: RawOptions): Promise<number> {
  const config = buildServeConfig(raw);
  // The reference server (YAML, protobuf, HTTP/2) loads only for the commands that run it.
  const { loadModelConfig, startServer } = await import("./lib/server/mod.ts");
  const models = config.models ? await loadModelConfig(config.models) : undefined;
  const read = (path: string, option: string) => {
    try {
      return Deno.readTextFileSync(path);
    } catch (error) {
      throw new UsageError([
        `Cannot read "${path}" given to ${option}: ${(error as Error).message}`,
      ]);
    }
  };
  const { grpcCertificateFile: cert, grpcPrivateKeyFile: key, grpcClientCaFile: ca } = config;
  const grpcTls = cert !== undefined && key !== undefined
    ? {
      cert: read(cert, "--grpc-certificate-file"),
      key: read(key, "--grpc-private-key-file"),
      ...(ca === undefined ? {} : { clientCaCerts: [read(ca, "--grpc-client-ca-file")] }),
    }
    : undefined;
  const server = await startServer({
    ...(models ? { models } : {}),
    host: config.host,
    httpPort: config.httpPort,
    metricsPort: config.metricsPort,
    grpcPort: config.grpcPort,
    ...(config.tfservingPort === undefined ? {} : { tfservingPort: config.tfservingPort }),
    ...(grpcTls ? { grpcTls } : {}),
  });
  const grpcKind = grpcTls === undefined ? "" : ca === undefined ? " (TLS)" : " (mutual TLS)";
  const tfserving = server.tfservingPort === undefined
    ? ""
    : `, TF Serving gRPC on ${config.host}:${server.tfservingPort}`;
  console.log(
    `Serving KServe v2, TorchServe and OpenAI-compatible HTTP on ${server.addr}, gRPC on ${server.grpcAddr}${grpcKind}${tfserving}, metrics on ${config.host}:${server.metricsPort}/metrics (Ctrl-C to stop)`,
  );
  await new Promise<void>((resolve) => {
    Deno.addSignalListener("SIGINT", resolve);
    Deno.addSignalListener("SIGTERM", resolve);
  });
  await server.close();
  return EXIT_OK;
}

async function demo(raw: RawOptions): Promise<number> {
  const { startServerInWorker } = await import("./lib/server/mod.ts");
  const server = await startServerInWorker();
  try {
    const openLoop = raw.has("request-rate-range") || raw.has("request-intervals");
    for (const [name, value] of DEMO_DEFAULTS) {
      // The demo's concurrency sweep would clash with an open-loop mode the user chose.
      if (!raw.has(name) && !(openLoop && name === "concurrency-range")) raw.set(name, value);
    }
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
    const raw = await withConfigFile(parsed);
    switch (parsed.command) {
      case "serve":
        return await serve(raw);
      case "demo":
        return await demo(raw);
      case "profile":
        return raw.has("profile-models")
          ? await sweep(buildSweepConfig(raw))
          : await profile(buildProfileConfig(raw));
      case "report":
        return report(buildReportConfig(raw));
    }
  } catch (error) {
    printError(describe(error));
    if (error instanceof UsageError) console.error('Run "inferperf --help" for the options.');
    return exitCodeOf(error);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
