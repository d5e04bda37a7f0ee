import assert from "node:assert/strict";
import { parseArgv } from "../cli/args.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { CheckpointStore } from "../sweep/mod.ts";
import { record } from "../sweep/testdata/records.ts";
import { buildSearchConfig } from "./config.ts";
import {
  allCombinations,
  type MeasureTogether,
  rankCombinations,
  runConcurrentSearch,
} from "./concurrent.ts";
import { formatConcurrentCsv, formatConcurrentSummary } from "./concurrent_report.ts";
import { inProcessServer } from "./server.ts";
import { bruteVariants, type Variant } from "./variants.ts";

const BASE = { max_batch_size: 2, instance_group: [{ kind: "KIND_CPU", count: 1 }] };

/**
 * Two 10 ms models sharing a 2-core server: N instances x max batch B serve N x B x 100/s, all
 * models' instances beyond 2 in total slowing every one in proportion.
 */
function together(variants: Map<string, Variant>): { measure: MeasureTogether; calls: string[] } {
  const calls: string[] = [];
  const measure: MeasureTogether = (plans) => {
    const members = plans.map((p) => variants.get(p.model)!);
    const counts = members.map((v) => Number(v.config.instance_group![0]!.count));
    const share = Math.min(1, 2 / counts.reduce((a, b) => a + b, 0));
    calls.push(plans.map((p) => `${p.model}@${p.concurrency.start}`).join(" "));
    return Promise.resolve(plans.map((p, i) => {
      const c = p.concurrency.start;
      const capacity = counts[i]! * Number(members[i]!.config.max_batch_size) * 100 * share;
      const throughput = Math.min(c * 100, capacity);
      return record({ model: p.model, value: c }, { throughput, p99Ms: c / throughput * 1000 })
        .result;
    }));
  };
  return { measure, calls };
}

async function search(...argv: string[]) {
  const config = buildSearchConfig(
    parseArgv([
      "profile",
      "--model-repository",
      "/nonexistent",
      "--run-config-profile-models-concurrently-enable",
      "--run-config-search-max-instance-count",
      "2",
      "--run-config-search-min-model-batch-size",
      "4",
      "--run-config-search-max-model-batch-size",
      "4",
      "--run-config-search-max-concurrency",
      "16",
      ...argv,
    ]).options,
  );
  const plans = config.models.map((model) => ({
    model,
    variants: bruteVariants(model.name, BASE, config),
  }));
  const variants = new Map(plans.flatMap((p) => p.variants).map((v) => [v.name, v]));
  const { measure, calls } = together(variants);
  const dir = await Deno.makeTempDir();
  try {
    const store = CheckpointStore.open(dir);
    store.use(config.settings, { objective: "throughput", constraints: [] });
    const outcome = await runConcurrentSearch({ ...config, checkpointDirectory: dir }, {
      plans,
      store,
      interrupt: new Interrupt(),
      server: inProcessServer(config.outputRepository),
      measure,
    });
    return { config, plans, outcome, calls };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("concurrent search: every combination measured together, ranked by the weighted objectives", async () => {
  const { plans, outcome, calls, config } = await search(
    "--profile-models",
    '{"a":{"weighting":3},"b":null}',
  );
  // Default, 1 and 2 instances x max batch 4, for each model: 9 combinations.
  assert.equal(allCombinations(plans).length, 9);
  assert.equal(outcome.combinations.length, 9);
  // Both models are measured at every point, together.
  assert.ok(calls.every((c) => /^a_config_\w+@(\d+) b_config_\w+@\1$/.test(c)), calls.join("\n"));
  const [best] = rankCombinations(outcome.combinations, outcome.models);
  // a weighs 3: its two instances win the shared cores (a 533/s, b 267/s, three instances on two
  // cores) over one each (400/s each).
  assert.equal(best!.outcome.combination.name, "a_config_1+b_config_0");
  const text = formatConcurrentSummary(outcome, { numConfigs: 2 });
  assert.match(
    text,
    /^Models a, b measured together: 9 combinations, \d+ points; weighting a 3, b 1/,
  );
  assert.match(
    text,
    /Best a_config_1\+b_config_0 at concurrency \d+:\n +a: a_config_1 \(2:CPU, max batch 4\): 533.3 infer\/sec/,
  );
  const csv = formatConcurrentCsv(outcome, config.inferenceFields).split("\n");
  assert.equal(
    csv[0],
    "Model,Batch,Concurrency,Model Config Path,Combination,Instance Group,Max Batch Size,Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)",
  );
  assert.match(csv[1]!, /^a,1,\d+,a_config_1,a_config_1\+b_config_0,2:CPU,4,Yes,533.3,/);
  // Equal weights: b's share counts as much as a's, and the best keeps one instance each.
  const equal = await search("--profile-models", "a,b");
  const [fair] = rankCombinations(equal.outcome.combinations, equal.outcome.models);
  assert.equal(fair!.outcome.combination.name, "a_config_0+b_config_0");
});

Deno.test("concurrent quick search climbs every model's coordinates and measures fewer points", async () => {
  const brute = await search("--profile-models", '{"a":{"weighting":3},"b":null}');
  const quick = await search(
    "--profile-models",
    '{"a":{"weighting":3},"b":null}',
    "--run-config-search-mode",
    "quick",
  );
  const [best] = rankCombinations(quick.outcome.combinations, quick.outcome.models);
  assert.equal(best!.outcome.combination.name, "a_config_1+b_config_0");
  assert.ok(quick.calls.length < brute.calls.length, `${quick.calls.length} ${brute.calls.length}`);
  // The model's own configurations are no step of the climb.
  assert.ok(quick.outcome.combinations.every((c) => !c.combination.name.includes("default")));
});
