/**
 * A simulated Triton for the search's unit tests: a model whose every
 * execution takes `computeMs` whatever its batch, served by N instances
 * batching up to max_batch_size, so each point's figures follow from the
 * variant and the load (closed loop: Little's law; open loop: the rate up
 * to capacity, then a queue that grows and does not stabilize).
 */
import { parseArgv } from "../../cli/args.ts";
import type { RawOptions } from "../../cli/options.ts";
import { Interrupt } from "../../measure/interrupt.ts";
import type { ProfilePlan } from "../../profile/plan.ts";
import { CheckpointStore, type MeasurePoint } from "../../sweep/mod.ts";
import { record } from "../../sweep/testdata/records.ts";
import type { LevelResult } from "../../types/results.ts";
import { buildSearchConfig, type SearchConfig } from "../config.ts";
import { runSearch, type SearchOutcome } from "../run.ts";
import type { ModelPlan } from "../walks.ts";
import { inProcessServer } from "../server.ts";
import { seededRandom } from "../tpe.ts";
import { bruteVariants, type Variant } from "../variants.ts";

export const BASE = {
  backend: "identity",
  max_batch_size: 8,
  instance_group: [{ kind: "KIND_CPU", count: 1 }],
};

/** A variant's figures at one load. */
export function simulate(
  variant: Variant,
  options: { mode: "concurrency" | "request_rate"; value: number; computeMs: number },
): LevelResult {
  const count = Number(variant.config.instance_group?.[0]?.count ?? 1);
  const batch = Math.max(1, Number(variant.config.max_batch_size ?? 1));
  const { value, computeMs } = options;
  const capacity = count * batch * 1000 / computeMs;
  let throughput: number;
  let latencyMs: number;
  let stable = true;
  if (options.mode === "concurrency") {
    throughput = Math.min(value, count * batch) * 1000 / computeMs;
    latencyMs = value / throughput * 1000;
  } else {
    throughput = Math.min(value, capacity);
    // Under capacity a request waits for at most one execution; over it the queue grows.
    latencyMs = value <= capacity ? computeMs * (1 + value / capacity) : computeMs * 10 * value /
      capacity;
    stable = value <= capacity;
  }
  const r = record(
    { model: variant.name, mode: options.mode, value },
    { throughput, p99Ms: latencyMs, stable },
  ).result;
  return { ...r, mode: options.mode };
}

/** The search of `argv` (model `m`), its brute variants from BASE. */
export function searchOf(...argv: string[]): { config: SearchConfig; plans: ModelPlan[] } {
  const raw: RawOptions = parseArgv([
    "profile",
    "--profile-models",
    "m",
    "--model-repository",
    "/nonexistent",
    ...argv,
  ]).options;
  const config = buildSearchConfig(raw);
  return {
    config,
    plans: config.models.map((model) => ({
      model,
      variants: bruteVariants(model.name, BASE, config),
    })),
  };
}

/** Runs a search against the simulation in a temporary checkpoint directory. */
export async function runSimulated(
  search: { config: SearchConfig; plans: ModelPlan[] },
  options: { computeMs: number; noise?: number; seed?: number; simulate?: typeof simulate },
): Promise<{ outcome: SearchOutcome; measured: string[] }> {
  // Measurement noise: throughput off by up to +-noise, as on a busy machine.
  const random = seededRandom(options.seed ?? 1);
  const dir = await Deno.makeTempDir();
  const variants = new Map(search.plans.flatMap((p) => p.variants).map((v) => [v.name, v]));
  const measured: string[] = [];
  const measure: MeasurePoint = (plan: ProfilePlan) => {
    const mode = plan.loadMode === "request_rate" ? "request_rate" : "concurrency";
    const value = (mode === "request_rate" ? plan.requestRate : plan.concurrency).start;
    measured.push(`${plan.model}@${value}`);
    const result = (options.simulate ?? simulate)(variants.get(plan.model)!, {
      mode,
      value,
      computeMs: options.computeMs,
    });
    const factor = 1 + (options.noise ?? 0) * (2 * random() - 1);
    return Promise.resolve({
      ...result,
      client: { ...result.client, throughput: result.client.throughput * factor },
    });
  };
  try {
    const store = CheckpointStore.open(dir);
    store.use(search.config.settings, { objective: "throughput", constraints: [] });
    const outcome = await runSearch(search.config, {
      plans: search.plans,
      store,
      interrupt: new Interrupt(),
      server: inProcessServer(search.config.outputRepository),
      measure,
    });
    return { outcome, measured };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
