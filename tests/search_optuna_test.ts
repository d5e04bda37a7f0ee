/**
 * The Optuna search against brute force on the same space, measured on the
 * reference server: each variant of the search is one simulated model there
 * (its instance count, max batch size and dynamic batching; 20 ms per
 * execution whatever the batch), so N instances x max batch B serve
 * N x B x 50 requests/s once enough are in flight, and the best of the space
 * is known: 4 x 16 at concurrency 64 or 128, 3,200/s.
 */
import assert from "node:assert/strict";
import { parseArgv } from "../lib/cli/args.ts";
import { Interrupt } from "../lib/measure/interrupt.ts";
import type { ModelConfig as ServedModel } from "../lib/server/mod.ts";
import { startServerInWorker } from "../lib/server/mod.ts";
import {
  bruteVariants,
  buildSearchConfig,
  inProcessServer,
  type ModelPlan,
  rankConfigs,
  rankModel,
  runSearch,
  type SearchServer,
  type Variant,
} from "../lib/search/mod.ts";
import { CheckpointStore } from "../lib/sweep/mod.ts";

const COMPUTE_MS = 20;
const BASE = {
  backend: "identity",
  max_batch_size: 4,
  instance_group: [{ kind: "KIND_CPU", count: 1 }],
};

/** A search variant as the reference server's model. */
function served(v: Variant): ServedModel {
  return {
    name: v.name,
    kind: "identity",
    compute_ms: COMPUTE_MS,
    instances: Number(v.config.instance_group?.[0]?.count ?? 1),
    max_batch_size: Number(v.config.max_batch_size ?? 0),
    ...(v.config.dynamic_batching ? { dynamic_batching: { max_queue_delay_ms: 0 } } : {}),
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
  };
}

/**
 * What a variant serves at concurrency `c` by construction: each of its instances runs one
 * execution of 20 ms at a time, a batch of up to max batch requests with dynamic batching,
 * one request without.
 */
function capacity(v: Variant, c: number): number {
  const model = served(v);
  const perExecution = model.dynamic_batching ? model.max_batch_size! : 1;
  return Math.min(c, model.instances! * perExecution) * 1000 / COMPUTE_MS;
}

/**
 * Runs the search of `argv` on a reference server serving every variant; returns its best (as
 * measured, and what that configuration and load serve by construction) and its points.
 */
async function search(
  ...argv: string[]
): Promise<{ best: number; bestCapacity: number; points: number; seconds: number }> {
  const config = buildSearchConfig(
    parseArgv([
      "profile",
      "--profile-models",
      "m",
      "--model-repository",
      "/nonexistent",
      "--run-config-search-max-instance-count",
      "4",
      "--run-config-search-max-model-batch-size",
      "16",
      "--run-config-search-max-concurrency",
      "128",
      // Timer-driven models: short windows measure them well.
      "-p",
      "300",
      "-s",
      "30",
      ...argv,
    ]).options,
  );
  const plans: ModelPlan[] = config.models.map((model) => ({
    model,
    variants: bruteVariants(model.name, BASE, config),
  }));
  const reference = await startServerInWorker({
    models: plans.flatMap((p) => p.variants).map(served),
  });
  const dir = Deno.makeTempDirSync({ prefix: "inferperf_optuna_" });
  // Every variant is served from the start: nothing to load, as in c_api mode.
  const server: SearchServer = {
    ...inProcessServer(config.outputRepository),
    // Not c_api: the points measure the reference server over the network.
    preparePoint: () => Promise.resolve({}),
    description: "the reference server",
    url: (protocol) => protocol === "grpc" ? reference.grpcAddr : reference.addr,
  };
  const started = performance.now();
  try {
    const store = CheckpointStore.open(dir);
    store.use(config.settings, { objective: "throughput", constraints: [] });
    const outcome = await runSearch(config, {
      plans,
      store,
      interrupt: new Interrupt(),
      server,
    });
    const [{ model, variants }] = outcome.models;
    const best = rankConfigs(rankModel(model!, variants!))[0]!;
    return {
      best: best.record.result.client.throughput,
      bestCapacity: capacity(best.variant.variant, best.record.result.value),
      points: outcome.measured,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await reference.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test({
  name: "Optuna search on the reference server: within 10 % of brute's best, a third of its points",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const brute = await search();
    const optuna = await search(
      "--run-config-search-mode",
      "optuna",
      // A third of brute's ~155 points (36 measured here). The independent sampler settled on
      // 3 x 16, 2,400/s, about once in eight runs; the multivariate (the default) found 4 x 16 in
      // every one of 400 simulated noise realizations (README).
      "--optuna-min-trials",
      "45",
      "--optuna-max-trials",
      "50",
      "--num-configs-per-model",
      "1",
    );
    const truth = 4 * 16 * 1000 / COMPUTE_MS;
    console.log(
      `brute: ${brute.points} points, best ${brute.best.toFixed(1)}/s in ${
        brute.seconds.toFixed(0)
      } s; optuna: ${optuna.points} points, best ${optuna.best.toFixed(1)}/s in ${
        optuna.seconds.toFixed(0)
      } s; formula ${truth}/s`,
    );
    assert.ok(Math.abs(brute.best - truth) <= truth * 0.1, `brute ${brute.best}`);
    // The best found is a configuration: judged by what it serves by construction, since the
    // measured best of 160 noisy points sits above the truth (3,233/s seen) and the same
    // configuration measured once by the Optuna search may sit below it (2,881/s seen).
    assert.equal(brute.bestCapacity, truth);
    assert.ok(
      optuna.bestCapacity >= brute.bestCapacity * 0.9,
      `optuna ${optuna.bestCapacity} (measured ${optuna.best}) against ${brute.bestCapacity}`,
    );
    assert.ok(optuna.best >= truth * 0.8, `optuna measured ${optuna.best}`);
    assert.ok(optuna.points <= brute.points / 3, `optuna ${optuna.points}, brute ${brute.points}`);
  },
});
