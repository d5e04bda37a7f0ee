import assert from "node:assert/strict";
import type { ModelConfig } from "../protocol/model_config.ts";
import { record } from "../sweep/testdata/records.ts";
import type { LevelResult } from "../types/results.ts";
import { rankConfigs, rankModel } from "./report.ts";
import { searchSpace } from "./optuna.ts";
import { BASE, runSimulated, searchOf } from "./testdata/simulated.ts";
import { bruteVariants, ensembleVariants, type Variant } from "./variants.ts";

const DELAYS: Record<string, number> = { slow: 20, fast: 5 };

/**
 * An ensemble of `slow` (20 ms per execution) then `fast` (5 ms): each step serves instances x
 * max batch (1 without dynamic batching) x 1000 / its delay per second, the whole at most
 * concurrency x 1000 / 25 ms.
 */
function simulateEnsemble(
  variant: Variant,
  options: { mode: "concurrency" | "request_rate"; value: number },
): LevelResult {
  const capacities = variant.composing!.map((m) => {
    const count = Number(m.config.instance_group?.[0]?.count ?? 1);
    const batch = m.config.dynamic_batching ? Number(m.config.max_batch_size) : 1;
    return count * batch * 1000 / DELAYS[m.model]!;
  });
  const throughput = Math.min(options.value * 1000 / 25, ...capacities);
  const r = record(
    { model: variant.name, value: options.value },
    { throughput, p99Ms: options.value / throughput * 1000 },
  ).result;
  return { ...r, mode: options.mode };
}

const STEP = (model: string) => ({ model_name: model, model_version: -1 });

/** The search of `argv` over the ensemble `m` of slow and fast, each BASE (1 x max batch 8). */
function ensembleSearch(...argv: string[]) {
  const { config } = searchOf(...argv);
  const ensemble: ModelConfig = {
    platform: "ensemble",
    max_batch_size: 8,
    ensemble_scheduling: { step: [STEP("slow"), STEP("fast")] },
  };
  const composing = ["slow", "fast"].map((name) => ({
    name,
    variants: bruteVariants(name, BASE, config),
  }));
  return {
    config,
    plans: config.models.map((model) => ({
      model,
      variants: ensembleVariants(model.name, ensemble, composing),
    })),
  };
}

// 1..3 instances x max batch 1..16 per step: 225 combinations; the best, slow 3 x 16 with any fast
// step of instances x max batch >= 12, serves 2,400/s from concurrency 60 on.
const SPACE = [
  "--run-config-search-max-instance-count",
  "3",
  "--run-config-search-max-model-batch-size",
  "16",
  "--run-config-search-max-concurrency",
  "256",
];

Deno.test("ensemble quick search: the own configuration, the climb, then the best swept", async () => {
  const search = ensembleSearch(...SPACE, "--run-config-search-mode", "quick");
  const { outcome, measured } = await runSimulated(search, {
    computeMs: 0,
    simulate: simulateEnsemble,
  });
  // The ensemble's own at 2 x its max batch 8 x 1 instance.
  assert.equal(measured[0], "m_config_default@16");
  const [{ model, variants }] = outcome.models;
  const best = rankConfigs(rankModel(model!, variants!))[0]!;
  assert.equal(best.record.result.client.throughput, 2400);
  const [slow, fast] = best.variant.variant.composing!;
  assert.deepEqual(slow!.coordinates, { count: 3, maxBatchSize: 16 });
  assert.ok(fast!.coordinates!.count * fast!.coordinates!.maxBatchSize! >= 12);
  // Each climb point is at 2 x the slow step's max batch x instances (at most 256); only the 3
  // best (--num-configs-per-model) and the own are swept after.
  const climbed = variants!.filter((v) => v.records.length > 0);
  for (const v of climbed.filter((v) => v.variant.name !== "m_config_default")) {
    const { count, maxBatchSize } = v.variant.composing![0]!.coordinates!;
    const load = Math.min(256, 2 * count * maxBatchSize!);
    assert.ok(v.records.some((r) => r.point.value === load), v.variant.name);
  }
  assert.equal(variants!.filter((v) => v.records.length > 1).length, 4);
  // Every point measured once; a small share of the space's 225 combinations x 9 concurrencies.
  assert.equal(new Set(measured).size, measured.length);
  assert.ok(climbed.length < 225 / 5, `${climbed.length} combinations`);
  console.log(`${measured.length} points over ${climbed.length - 1} of 225 combinations`);
});

Deno.test("ensemble Optuna search: each composing model's instance count and max batch size", () => {
  const search = ensembleSearch(...SPACE, "--run-config-search-mode", "optuna");
  const space = searchSpace(search.plans[0]!, {
    loads: search.config.concurrencies,
    formula: false,
  });
  assert.deepEqual(space.parameters.map((p) => `${p.name} ${p.high + 1}`), [
    "slow::instance_group 3",
    "slow::max_batch_size 5",
    "fast::instance_group 3",
    "fast::max_batch_size 5",
    "load 9",
  ]);
  assert.equal(space.size, 225 * 9);
  const point = space.point({
    "slow::instance_group": 2,
    "slow::max_batch_size": 4,
    "fast::instance_group": 0,
    "fast::max_batch_size": 1,
    "load": 3,
  });
  assert.deepEqual(point.variant.composing!.map((m) => m.coordinates), [
    { count: 3, maxBatchSize: 16 },
    { count: 1, maxBatchSize: 2 },
  ]);
  assert.equal(point.load, 8);
});
