import assert from "node:assert/strict";
import { parseArgv } from "../cli/args.ts";
import { parseConfigYaml } from "../cli/yaml.ts";
import { UsageError } from "../types/errors.ts";
import { record } from "../sweep/testdata/records.ts";
import type { LevelResult } from "../types/results.ts";
import { blsVariants, composingVariants, parseBlsComposing } from "./bls.ts";
import { buildSearchConfig } from "./config.ts";
import { rankConfigs, rankModel } from "./report.ts";
import { searchSpace } from "./optuna.ts";
import { planOf } from "./run.ts";
import { BASE, runSimulated } from "./testdata/simulated.ts";
import climb from "./testdata/model_analyzer_bls_climb.json" with { type: "json" };
import { bruteVariants, type Variant } from "./variants.ts";

const search = (...argv: string[]) =>
  buildSearchConfig(
    parseArgv([
      "profile",
      "--profile-models",
      "bls",
      "--model-repository",
      "/nonexistent",
      "--triton-launch-mode",
      "remote",
      ...argv,
    ]).options,
  );

const refusal = (...argv: string[]) => {
  try {
    search(...argv);
  } catch (error) {
    if (error instanceof UsageError) return error.errors;
    throw error;
  }
  return [];
};

Deno.test("bls_composing_models: a comma string, a list, or mappings with model_config_parameters", () => {
  const errors: string[] = [];
  const parse = (value: string[]) =>
    parseBlsComposing(new Map([["bls-composing-models", value]]), errors);
  assert.deepEqual(parse(["slow, fast"]), [{ name: "slow" }, { name: "fast" }]);
  assert.deepEqual(parse(["slow", "fast"]), [{ name: "slow" }, { name: "fast" }]);
  // Model Analyzer's YAML: instance_group's count list is the counts searched, the rest is set.
  const yaml = JSON.stringify([
    {
      slow: {
        model_config_parameters: {
          instance_group: [[{ kind: "KIND_CPU", count: [1, 2, 4] }]],
          max_batch_size: [8, 16],
          dynamic_batching: { max_queue_delay_microseconds: 100 },
        },
      },
    },
    "fast",
  ]);
  const parsed = parse([yaml])!;
  assert.deepEqual(parsed, [
    {
      name: "slow",
      instanceCounts: [1, 2, 4],
      kind: "KIND_CPU",
      fixed: { dynamic_batching: { max_queue_delay_microseconds: 100 } },
    },
    { name: "fast" },
  ]);
  assert.deepEqual(errors, []);
  const variants = composingVariants(parsed[0]!, {
    base: BASE,
    ranges: { instanceCounts: [1, 2, 3], maxBatchSizes: [4] },
  });
  assert.deepEqual(variants.slice(1).map((v) => v.coordinates!.count), [1, 2, 4]);
  assert.deepEqual(variants[1]!.config.dynamic_batching, { max_queue_delay_microseconds: 100 });
  parse([
    JSON.stringify({
      slow: {
        model_config_parameters: { dynamic_batching: { max_queue_delay_microseconds: [100, 200] } },
      },
    }),
  ]);
  assert.match(errors[0]!, /more than one combination of model_config_parameters/);
});

Deno.test("bls_composing_models in a --config file, as Model Analyzer's YAML", () => {
  const composing = (text: string) => {
    const errors: string[] = [];
    const parsed = parseBlsComposing(
      parseConfigYaml(text, { file: "c.yaml", command: "profile" }),
      errors,
    );
    assert.deepEqual(errors, []);
    return parsed;
  };
  const names = [{ name: "slow" }, { name: "fast" }];
  assert.deepEqual(composing("bls_composing_models: slow,fast\n"), names);
  assert.deepEqual(composing("bls_composing_models: [slow, fast]\n"), names);
  assert.deepEqual(
    composing(
      "bls_composing_models:\n  - slow:\n      model_config_parameters:\n" +
        "        instance_group:\n          - kind: KIND_CPU\n            count: [1, 2]\n  - fast\n",
    ),
    [{ name: "slow", instanceCounts: [1, 2], kind: "KIND_CPU" }, { name: "fast" }],
  );
});

Deno.test("a BLS search: quick by default, Model Analyzer's refusals in its words", () => {
  const config = search("--bls-composing-models", "slow,fast");
  assert.equal(config.searchMode, "quick");
  assert.deepEqual(config.models[0]!.blsComposing, [{ name: "slow" }, { name: "fast" }]);
  assert.deepEqual(refusal("--bls-composing-models", "slow", "--run-config-search-mode", "brute"), [
    "Profiling of models in brute search mode is not supported for BLS models. Please use quick search mode.",
  ]);
  assert.deepEqual(
    refusal("--bls-composing-models", "slow", "--profile-models", "bls,other"),
    ["Profiling of multiple models is not supported for BLS models."],
  );
  assert.deepEqual(
    refusal("--bls-composing-models", "slow", "--run-config-profile-models-concurrently-enable"),
    [
      "Profiling models concurrently is not supported for BLS models. Please remove `--run-config-profile-models-concurrently-enable from the config/CLI.",
    ],
  );
  assert.match(
    refusal("--bls-composing-models", "slow", "--triton-launch-mode", "local")[0]!,
    /--triton-launch-mode remote only \(given local\)/,
  );
  // Each point's profile run reports the composing models' statistics (perf_analyzer's flag).
  const plan = planOf(config, {
    model: config.models[0]!,
    served: "bls",
    batchSize: 1,
    mode: "concurrency",
    value: 4,
    extra: {},
  });
  assert.deepEqual(plan.composingModels, [
    { name: "slow", version: "" },
    { name: "fast", version: "" },
  ]);
});

Deno.test("BLS variants: the own configuration with the composing models' own, then every combination", () => {
  const ranges = { instanceCounts: [1, 2], maxBatchSizes: [4] };
  const variants = blsVariants(
    bruteVariants("bls", BASE, ranges),
    ["slow", "fast"].map((name) => bruteVariants(name, BASE, ranges)),
  );
  assert.equal(variants.length, 1 + 2 * 2 * 2);
  assert.deepEqual(variants[0]!.composing!.map((c) => c.name), [
    "slow_config_default",
    "fast_config_default",
  ]);
  assert.equal(variants[0]!.config.name, "bls_config_default");
  const last = variants.at(-1)!;
  assert.equal(last.name, "bls_config_7");
  assert.deepEqual(
    [last.coordinates, ...last.composing!.map((c) => c.coordinates)],
    [{ count: 2, maxBatchSize: 4 }, { count: 2, maxBatchSize: 4 }, { count: 2, maxBatchSize: 4 }],
  );
  assert.ok(variants.every((v) => v.bls && v.config.ensemble_scheduling === undefined));
});

const DELAYS = climb.delays;
const HOLD = DELAYS.reduce((a, b) => a + b, 0);

/** model_analyzer_climbs.py's BLS model: it holds an instance for its steps, which queue at theirs. */
function simulateBls(
  variant: Variant,
  options: { mode: "concurrency" | "request_rate"; value: number },
): LevelResult {
  const capacity = (v: Variant, ms: number) =>
    Number(v.config.instance_group?.[0]?.count ?? 1) *
    (v.config.dynamic_batching ? Number(v.config.max_batch_size) : 1) * 1000 / ms;
  const throughput = Math.min(
    options.value * 1000 / HOLD,
    capacity(variant, HOLD),
    ...variant.composing!.map((m, k) => capacity(m, DELAYS[k]!)),
  );
  const r = record(
    { model: variant.name, value: options.value },
    { throughput, p99Ms: options.value / throughput * 1000 },
  ).result;
  return { ...r, mode: options.mode };
}

Deno.test("BLS quick search: Model Analyzer's climb over the BLS model's and its composing models' coordinates", async () => {
  const config = search(
    "--bls-composing-models",
    "slow,fast",
    "--run-config-search-max-instance-count",
    String(climb.counts.length),
    "--run-config-search-max-model-batch-size",
    String(climb.batches.at(-1)),
    "--run-config-search-max-concurrency",
    String(climb.maxConcurrency),
  );
  const model = config.models[0]!;
  const variants = blsVariants(
    bruteVariants("bls", BASE, config),
    ["slow", "fast"].map((name) => bruteVariants(name, BASE, config)),
  );
  const { outcome, measured } = await runSimulated(
    { config, plans: [{ model, variants }] },
    { computeMs: 0, simulate: simulateBls },
  );
  const byName = new Map(variants.map((v) => [v.name, v]));
  const indexes = (v: Variant) =>
    [v.coordinates!, ...v.composing!.map((c) => c.coordinates!)].flatMap((p) => [
      climb.batches.indexOf(p.maxBatchSize!),
      climb.counts.indexOf(p.count),
    ]);
  // After the own configuration, each coordinate Model Analyzer's generator measured (once: one it
  // comes back to is taken as stored), at 2 x the BLS model's own max batch x instances.
  const seen = new Set<string>();
  const climbed: number[][] = [];
  for (const point of measured.slice(1)) {
    const [name, load] = point.split("@");
    const v = byName.get(name!)!;
    if (v.name === "bls_config_default" || seen.has(v.name)) continue;
    seen.add(v.name);
    climbed.push(indexes(v));
    const own = v.coordinates!;
    assert.equal(Number(load), Math.min(climb.maxConcurrency, 2 * own.count * own.maxBatchSize!));
  }
  const expected = [...new Map(climb.measured.map((c) => [c.join(), c])).values()];
  assert.deepEqual(climbed.slice(0, expected.length), expected);
  const best = rankConfigs(rankModel(model, outcome.models[0]!.variants))[0]!;
  assert.deepEqual(indexes(best.variant.variant), climb.best);
  console.log(`${expected.length} of ${variants.length - 1} combinations climbed`);
});

Deno.test("BLS Optuna search: the BLS model's own coordinates, then each composing model's", async () => {
  const config = search(
    ...["--bls-composing-models", "slow,fast", "--run-config-search-mode", "optuna"],
    ...["--run-config-search-max-instance-count", "3"],
    ...["--run-config-search-max-model-batch-size", "4"],
    ...["--run-config-search-max-concurrency", "32", "--optuna-max-trials", "60"],
  );
  const model = config.models[0]!;
  const variants = blsVariants(
    bruteVariants("bls", BASE, config),
    ["slow", "fast"].map((name) => bruteVariants(name, BASE, config)),
  );
  const space = searchSpace({ model, variants }, { loads: config.concurrencies, formula: false });
  assert.deepEqual(space.parameters.map((p) => `${p.name} ${p.high + 1}`), [
    "instance_group 3",
    "max_batch_size 3",
    "slow::instance_group 3",
    "slow::max_batch_size 3",
    "fast::instance_group 3",
    "fast::max_batch_size 3",
    "load 6",
  ]);
  const { outcome, measured } = await runSimulated(
    { config, plans: [{ model, variants }] },
    { computeMs: 0, simulate: simulateBls },
  );
  // The analytical best over every combination and load, as a brute search would measure it.
  const all = variants.slice(1).flatMap((v) =>
    config.concurrencies.map((c) => simulateBls(v, { mode: "concurrency", value: c }))
  );
  const truth = Math.max(...all.map((r) => r.client.throughput));
  const best = rankConfigs(rankModel(model, outcome.models[0]!.variants))[0]!;
  const found = Math.max(...best.variant.records.map((r) => r.result.client.throughput));
  assert.ok(found >= truth * 0.9, `${found} against ${truth}`);
  assert.ok(new Set(measured).size <= all.length / 3, `${measured.length} of ${all.length}`);
  console.log(
    `${found} of ${truth} infer/sec in ${new Set(measured).size} of ${all.length} points`,
  );
});
