/** The model configuration search's console flow: variants, the server, the points, the reports. */
import { checkOutputs, writeAll, writeFileAtomic } from "../report/output_file.ts";
import type { RawOptions } from "../cli/options.ts";
import { formatModelConfig } from "../protocol/model_config.ts";
import {
  acrossModels,
  blsVariants,
  bruteVariants,
  buildSearchConfig,
  checkRemote,
  composingVariants,
  ensembleSteps,
  ensembleVariants,
  findCombinations,
  findConfigs,
  formatInferenceCsv,
  formatSearchSummary,
  formatServerCsv,
  inProcessServer,
  manualVariants,
  MODEL_CONFIGS,
  modelConfigChange,
  type ModelPlan,
  prepareOutputRepository,
  printPdf,
  rankConfigs,
  rankModel,
  readModelConfig,
  remoteServer,
  renderCombinationHtml,
  renderDetailedHtml,
  renderSearchHtml,
  runConcurrentSearch,
  runSearch,
  type SearchConfig,
  type SearchOutcome,
  type SearchServer,
  startLocalServer,
  storedSearchOptions,
  type Variant,
  writeBestDirectory,
  writeModelDirectory,
} from "../search/mod.ts";
import { CheckpointStore, formatPointResult, formatPointStart } from "../sweep/mod.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { Progress } from "../profile/progress.ts";
import { type CommandContext, type Outcome, printError } from "./outcome.ts";
import { saveOnCtrlC } from "./sweep.ts";
import { openReplay, printReplayed } from "./_replay.ts";
import { CONCURRENT_EVENTS, finishConcurrent } from "./_concurrent.ts";

/** Each model's variants: its own configuration, then the brute or manual search's. */
function planVariants(config: SearchConfig): ModelPlan[] {
  return config.models.map((model) => {
    const base = readModelConfig(config.modelRepository, model.name);
    let variants: Variant[];
    const steps = ensembleSteps(base);
    const ranges = { ...config, cpuOnly: model.cpuOnly };
    if (model.configParameters) {
      variants = manualVariants(model.name, base, model.configParameters);
    } else if (model.blsComposing) {
      // A BLS model: its own coordinates and its composing models', which it calls by name.
      variants = blsVariants(
        bruteVariants(model.name, base, ranges),
        model.blsComposing.map((c) =>
          composingVariants(c, { base: readModelConfig(config.modelRepository, c.name), ranges })
        ),
      );
      if (config.disabled) variants = variants.slice(0, 1);
    } else if (steps.length > 0) {
      // An ensemble: its composing models' configurations are searched, the ensemble measured.
      variants = ensembleVariants(
        model.name,
        base,
        steps.map((name) => ({
          name,
          variants: bruteVariants(name, readModelConfig(config.modelRepository, name), ranges),
        })),
      );
      if (config.disabled) variants = variants.slice(0, 1);
    } else {
      variants = bruteVariants(model.name, base, ranges);
      if (config.disabled) variants = variants.slice(0, 1);
    }
    return { model, variants };
  });
}

async function startServer(config: SearchConfig): Promise<SearchServer> {
  switch (config.launch.mode) {
    case "local":
      return await startLocalServer({
        serverPath: config.launch.serverPath,
        repository: Deno.realPathSync(config.outputRepository),
        flags: config.launch.flags,
        ...(config.launch.logFile ? { logFile: config.launch.logFile } : {}),
        ...(config.models[0]?.environment ? { environment: config.models[0].environment } : {}),
      });
    case "remote":
      await checkRemote(config.launch.http);
      return remoteServer(config.launch);
    case "c_api":
      return inProcessServer(config.outputRepository);
  }
}

/** A detailed report's page (reports/detailed/NAME/detailed_report.html) and its PDF where Chromium runs. */
async function writeDetailed(config: SearchConfig, page: { name: string; html: string }) {
  const directory = `${config.exportPath}/reports/detailed/${page.name}`;
  Deno.mkdirSync(directory, { recursive: true });
  const file = `${directory}/detailed_report.html`;
  writeFileAtomic(file, page.html);
  const pdf = `${directory}/detailed_report.pdf`;
  const why = await printPdf(file, pdf);
  console.log(
    `Detailed report of ${page.name} written to ${file}${
      why ? ` (no PDF: ${why})` : ` and ${pdf}`
    }`,
  );
}

/** Writes the CSVs, the summary pages and (unless a report) the best configuration of each model. */
function finishSearch(
  config: SearchConfig,
  outcome: SearchOutcome,
  options: { bestDirectories: boolean },
): Outcome {
  const across = acrossModels(outcome, { count: config.numTopConfigs, across: config.across });
  console.log(formatSearchSummary(outcome, config));
  if (across) {
    console.log(
      formatSearchSummary({ ...outcome, models: [across] }, { numConfigs: config.numTopConfigs }),
    );
  }
  const results = `${config.exportPath}/results`;
  Deno.mkdirSync(results, { recursive: true });
  const files = [
    [`${results}/metrics-model-inference.csv`, formatInferenceCsv(outcome, config.inferenceFields)],
    [`${results}/metrics-server-only.csv`, formatServerCsv(outcome, config.serverFields)],
  ] as const;
  writeAll(files.map(([path, text]) => () => writeFileAtomic(path, text)));
  console.log(`Results written to ${files.map(([path]) => path).join(" and ")}`);
  for (const model of across ? [...outcome.models, across] : outcome.models) {
    const directory = `${config.exportPath}/reports/summaries/${model.model.name}`;
    Deno.mkdirSync(directory, { recursive: true });
    const file = `${directory}/result_summary.html`;
    const numConfigs = model === across ? config.numTopConfigs : config.numConfigs;
    writeFileAtomic(file, renderSearchHtml(model, { version: denoConfig.version, numConfigs }));
    console.log(`Summary of ${model.model.name} written to ${file}`);
  }
  for (const { model, variants } of options.bestDirectories ? outcome.models : []) {
    const best = rankConfigs(rankModel(model, variants))[0];
    if (!best) continue;
    const directory = writeBestDirectory({
      outputRepository: config.outputRepository,
      modelRepository: config.modelRepository,
      variant: best.variant.variant,
    });
    console.log(
      `Best configuration of ${model.name} (${best.variant.variant.name}) written to ${directory}`,
    );
  }
  const failed = outcome.models.flatMap((m) => m.variants).filter((v) => v.failure).length;
  if (failed > 0) printError(`${failed} configurations could not be measured; see "Failed"`);
  return failed > 0 ? "failed" : "ok";
}

/** How a search ended: interrupted (where its points are), or complete with its counts. */
function searchEnd(
  outcome: { interrupted: boolean; measured: number; resumed: number },
  store: CheckpointStore,
): string {
  return outcome.interrupted
    ? `\nInterrupted: measured points are in ${store.latest}; run the same command again to resume.\n`
    : `\nSearch complete (points measured now: ${outcome.measured}, from the checkpoint: ${outcome.resumed}).\n`;
}

/**
 * A model configuration search with checkpoints. Ctrl-C once: the running
 * point finishes, is saved, and the search stops; three times: save and
 * exit at once. The local server is stopped in every case.
 */
export async function searchCommand(raw: RawOptions, context: CommandContext): Promise<Outcome> {
  const config = buildSearchConfig(raw);
  checkOutputs([
    { path: config.checkpointDirectory, flag: "--checkpoint-directory", directory: true },
    { path: config.exportPath, flag: "--export-path", directory: true },
  ]);
  const plans = planVariants(config);
  const store = CheckpointStore.open(config.checkpointDirectory);
  // The models' own configurations too: a resumed search must vary the same ones.
  store.use(
    {
      ...config.settings,
      [MODEL_CONFIGS]: plans.map((p) => formatModelConfig(p.variants[0]!.config)),
    },
    { objective: "throughput", constraints: [] },
    {
      describe: {
        [MODEL_CONFIGS]: (stored, now) =>
          modelConfigChange(plans.map((p) => p.model.name), stored, now),
      },
    },
  );
  // A resumed search rewrites the repository it wrote before.
  prepareOutputRepository(config.outputRepository, {
    override: config.override || store.loaded !== undefined,
  });
  const written = new Set<string>();
  for (const v of plans.flatMap((p) => p.variants.flatMap((v) => [...(v.composing ?? []), v]))) {
    if (written.has(v.name)) continue;
    written.add(v.name);
    writeModelDirectory(`${config.outputRepository}/${v.name}`, {
      source: `${config.modelRepository}/${v.model}`,
      config: v.config,
    });
  }
  const count = plans.reduce((n, p) => n + p.variants.length, 0);
  console.log(
    `${count} model configurations written to ${config.outputRepository}; ${
      store.loaded
        ? `resuming from checkpoint ${store.loaded} (points measured: ${store.records.size})`
        : "starting a fresh search"
    }\n`,
  );
  let server: SearchServer;
  try {
    server = await startServer(config);
  } catch (error) {
    // Nothing measured: the repository written for this start goes, so that a corrected command
    // does not need --override-output-model-repository.
    if (!store.loaded) Deno.removeSync(config.outputRepository, { recursive: true });
    throw error;
  }
  console.log(`Server: ${server.description}\n`);
  const ctrlC = saveOnCtrlC(store, {
    stop: () => void server.stop().finally(() => context.exitNow("interrupted")),
  });
  const progress = new Progress({ enabled: context.progress ?? true });
  const say = (text: string) => progress.print(text);
  try {
    if (config.concurrent) {
      const together = await runConcurrentSearch(config, {
        plans,
        store,
        interrupt: ctrlC.interrupt,
        server,
        events: CONCURRENT_EVENTS,
      });
      console.log(searchEnd(together, store));
      const finished = finishConcurrent(config, together, { bestDirectories: true });
      return together.interrupted ? "interrupted" : finished;
    }
    const outcome = await runSearch(config, {
      plans,
      store,
      interrupt: ctrlC.interrupt,
      server,
      ...(config.launch.mode === "local"
        ? {
          restart: async () => {
            await server.stop();
            server = await startServer(config);
            say(`Server: ${server.description}`);
            return server;
          },
        }
        : {}),
      events: {
        variantStart: (v, info) => {
          say(
            info.again ? `    more points of ${v.name}` : `[${info.index}/${info.total}] ${v.name}`,
          );
          progress.step({
            noun: "configuration",
            index: info.index,
            total: info.total,
            label: v.name,
          });
        },
        pointStart: (point) =>
          say(formatPointStart(point, { index: 0 }).replace(/^\[0\] /, "  ").trimEnd()),
        point: (record) => say(formatPointResult(record, { percentile: 99 }).trimEnd()),
        variantFailed: (_, message) => say(`    failed: ${message}`),
        seriesEnd: (reason) => say(`    ${reason}`),
        serverRestarted: (reason) => say(`    the server stopped (${reason}); restarted`),
        optuna: (model, r) =>
          say(
            `Optuna search of ${model.name}: ${r.trials} trials (${r.bounds.min} to ${r.bounds.max} of a space of ${r.size} points), the best score at ${
              r.bestTrial === 0 ? "the baseline" : `trial ${r.bestTrial}`
            }`,
          ),
        climb: (model, r) =>
          say(
            `Quick search of ${model.name}: the climb measured ${r.coordinates} of the ${r.size} combinations of its ${
              model.blsComposing ? "own and its composing models'" : "composing models'"
            } configurations`,
          ),
      },
      pointEvents: progress.events(),
    });
    progress.close();
    console.log(searchEnd(outcome, store));
    const finished = finishSearch(config, outcome, { bestDirectories: true });
    return outcome.interrupted ? "interrupted" : finished;
  } finally {
    ctrlC.remove();
    await server.stop();
  }
}

/**
 * `inferperf report` of a search's checkpoint: the summary, CSVs and pages
 * again from the stored points, nothing measured; undefined when the
 * checkpoint is not a search's.
 */
export async function searchReportCommand(raw: RawOptions): Promise<Outcome | undefined> {
  const { store, interrupt } = openReplay(raw);
  const options = store.storedSettings && storedSearchOptions(store.storedSettings, raw);
  if (!options) return undefined;
  const config = buildSearchConfig(options);
  const given = raw.get("report-model-configs");
  const names = Array.isArray(given) ? given.flatMap((n) => n.split(",")) : [];
  if (config.concurrent) {
    const together = await runConcurrentSearch(config, {
      plans: planVariants(config),
      store,
      interrupt,
      server: inProcessServer(config.outputRepository),
    });
    printReplayed(store, { interrupted: false });
    const detailed = findCombinations(together, names);
    const finished = finishConcurrent(config, together, { bestDirectories: false });
    for (const combination of detailed) {
      await writeDetailed(config, {
        name: combination.combination.name,
        html: renderCombinationHtml(together, { combination, version: denoConfig.version }),
      });
    }
    return finished;
  }
  const outcome = await runSearch(config, {
    plans: planVariants(config),
    store,
    interrupt,
    server: inProcessServer(config.outputRepository),
  });
  printReplayed(store, outcome);
  const detailed = findConfigs(outcome, names);
  const finished = finishSearch(config, outcome, { bestDirectories: false });
  for (const one of detailed) {
    await writeDetailed(config, {
      name: one.variant.variant.name,
      html: renderDetailedHtml(one, { version: denoConfig.version }),
    });
  }
  return finished;
}
