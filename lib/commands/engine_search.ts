/** The engine search's console flow: the variants, each engine started, the points, the reports. */
import denoConfig from "../../deno.json" with { type: "json" };
import type { RawOptions } from "../cli/options.ts";
import { Interrupt } from "../measure/interrupt.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import { runProfile } from "../profile/run.ts";
import { UnstableError } from "../load/sweep.ts";
import type { LevelResult } from "../types/results.ts";
import { checkOutputs, writeAll, writeFileAtomic } from "../report/output_file.ts";
import {
  buildEngineSearchConfig,
  checkEnginePort,
  describeEnginePoint,
  type EngineOutcome,
  type EngineSearchConfig,
  type EngineVariant,
  fillPlaceholders,
  formatCommand,
  formatEngineCsv,
  formatEngineSummary,
  localEngine,
  remoteEngine,
  renderEngineHtml,
  runSearch,
  type SearchServer,
  storedOptions,
  unmanagedServer,
} from "../search/mod.ts";
import { CheckpointStore } from "../sweep/mod.ts";
import { type CommandContext, type Outcome, printError } from "./outcome.ts";
import { saveOnCtrlC } from "./sweep.ts";
import { openReplay, printReplayed } from "./_replay.ts";

/**
 * A capacity search as one point: the level at its answer (the highest load
 * within the SLOs), else, when the SLOs break at the lowest load, the lowest
 * level measured.
 */
async function measureCapacity(
  plan: ProfilePlan,
  options: { interrupt: Interrupt },
): Promise<LevelResult> {
  let outcome;
  try {
    outcome = await runProfile(plan, { interrupt: options.interrupt });
  } catch (error) {
    // An unstable level is a measurement too, as a sweep point's.
    if (error instanceof UnstableError) return error.result;
    throw error;
  }
  const answer = outcome.capacity?.value;
  const levels = outcome.results;
  return levels.findLast((r) => r.value === answer) ??
    [...levels].sort((a, b) => a.value - b.value)[0]!;
}

/** Writes the CSV and the summary page; prints the summary and the best command line. */
function finishEngineSearch(
  config: EngineSearchConfig,
  outcome: EngineOutcome,
  launched: ReadonlyMap<string, string>,
): Outcome {
  const commands = new Map(config.variants.map((v) => [
    v.name,
    launched.get(v.name) ??
      formatCommand(fillPlaceholders(v.command, { host: "127.0.0.1", port: 8000 })),
  ]));
  console.log(
    formatEngineSummary(outcome, {
      numConfigs: config.numConfigs,
      commands: config.launch.mode === "local" ? commands : new Map(),
    }),
  );
  const results = `${config.exportPath}/results`;
  const summary = `${config.exportPath}/reports/summaries/${
    config.model.name.replace(/[^A-Za-z0-9._-]+/g, "_")
  }`;
  Deno.mkdirSync(results, { recursive: true });
  Deno.mkdirSync(summary, { recursive: true });
  const csv = `${results}/metrics-llm-inference.csv`;
  const html = `${summary}/result_summary.html`;
  writeAll([
    () => writeFileAtomic(csv, formatEngineCsv(outcome)),
    () =>
      writeFileAtomic(
        html,
        renderEngineHtml(outcome.models[0]!, {
          version: denoConfig.version,
          numConfigs: config.numConfigs,
          commands: config.launch.mode === "local" ? commands : new Map(),
        }),
      ),
  ]);
  console.log(`Results written to ${csv}; summary page ${html}`);
  const failed = outcome.models.flatMap((m) => m.variants).filter((v) => v.failure).length;
  if (failed > 0) printError(`${failed} variants could not be measured; see "Failed"`);
  return failed > 0 ? "failed" : "ok";
}

/**
 * An engine search with checkpoints. Ctrl-C once: the running point
 * finishes, is saved, and the search stops; three times: save and exit at
 * once. The engine is stopped in every case.
 */
export async function engineSearchCommand(
  raw: RawOptions,
  context: CommandContext,
): Promise<Outcome> {
  const config = buildEngineSearchConfig(raw);
  checkOutputs([
    { path: config.checkpointDirectory, flag: "--checkpoint-directory", directory: true },
    { path: config.exportPath, flag: "--export-path", directory: true },
  ]);
  if (config.launch.mode === "local" && config.launch.port !== undefined) {
    checkEnginePort(config.launch.port);
  }
  const store = CheckpointStore.open(config.checkpointDirectory);
  store.use(config.settings, { objective: "throughput", constraints: [] });
  const excluded = config.excluded > 0
    ? ` (${config.excluded} combinations left out by engine.constraints)`
    : "";
  console.log(
    `${config.variants.length} variants${excluded}; ${
      store.loaded
        ? `resuming from checkpoint ${store.loaded} (points measured: ${store.records.size})`
        : "starting a fresh search"
    }\n`,
  );
  const options = {
    warmup: config.warmup,
    ...(config.clearCache ? { clearCache: config.clearCache } : {}),
  };
  const local = config.launch.mode === "local"
    ? localEngine(config.launch, {
      ...options,
      variants: config.variants,
      capacity: config.capacity,
    })
    : undefined;
  const server: SearchServer<EngineVariant> = local ??
    await remoteEngine(config.launch as Extract<typeof config.launch, { mode: "remote" }>, options);
  console.log(`Engine: ${server.description}\n`);
  const ctrlC = saveOnCtrlC(store, {
    stop: () => void server.stop().finally(() => context.exitNow("interrupted")),
  });
  try {
    const outcome = await runSearch(config, {
      plans: [{ model: config.model, variants: config.variants }],
      store,
      interrupt: ctrlC.interrupt,
      server,
      ...(config.capacity ? { measure: measureCapacity } : {}),
      events: {
        variantStart: (v, info) => console.log(`[${info.index}/${info.total}] ${v.name}`),
        point: (record) => console.log(`  ${describeEnginePoint({ record })}`),
        variantFailed: (_, message) => console.log(`    failed: ${message}`),
        seriesEnd: (reason) => console.log(`    ${reason}`),
      },
    });
    console.log(
      outcome.interrupted
        ? `\nInterrupted: measured points are in ${store.latest}; run the same command again to resume.\n`
        : `\nSearch complete (points measured now: ${outcome.measured}, from the checkpoint: ${outcome.resumed}).\n`,
    );
    const finished = finishEngineSearch(config, outcome, local?.commands ?? new Map());
    return outcome.interrupted ? "interrupted" : finished;
  } finally {
    ctrlC.remove();
    await server.stop();
  }
}

/**
 * `inferperf report` of an engine search's checkpoint: the summary, CSV and
 * page again from its points, nothing measured (no engine started);
 * undefined when the checkpoint is not an engine search's.
 */
export async function engineReportCommand(raw: RawOptions): Promise<Outcome | undefined> {
  const { store, interrupt } = openReplay(raw);
  const settings = store.storedSettings;
  if (!settings || !("engine" in settings)) return undefined;
  const config = buildEngineSearchConfig(storedOptions(settings, raw));
  const outcome = await runSearch(config, {
    plans: [{ model: config.model, variants: config.variants }],
    store,
    interrupt,
    server: unmanagedServer<EngineVariant>({
      description: "the checkpoint",
      model: (variant) => variant.model,
    }),
  });
  printReplayed(store, outcome);
  return finishEngineSearch(config, outcome, new Map());
}
