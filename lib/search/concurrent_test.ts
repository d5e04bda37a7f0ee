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
import {
  findCombinations,
  formatConcurrentCsv,
  formatConcurrentSummary,
  renderCombinationHtml,
  renderConcurrentHtml,
} from "./concurrent_report.ts";
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

/**
 * Ground truth of independent loads: model m's N instances x max batch B serve
 * at most N x B x RATE[m]/s, at concurrency c `capacity x c / (c + 4)`, so its
 * p99 latency (Little's law) is (c + 4) / capacity: each model's best load is
 * the highest its own latency limit allows.
 */
const RATE: Record<string, number> = { a: 100, b: 50 };
function saturating(variants: Map<string, Variant>): { measure: MeasureTogether; calls: string[] } {
  const calls: string[] = [];
  const measure: MeasureTogether = (plans) => {
    calls.push(plans.map((p) => `${p.model}@${p.concurrency.start}`).join(" "));
    return Promise.resolve(plans.map((p) => {
      const v = variants.get(p.model)!;
      const capacity = Number(v.config.instance_group![0]!.count) *
        Number(v.config.max_batch_size) * RATE[v.model]!;
      const c = p.concurrency.start;
      const throughput = capacity * c / (c + 4);
      return record({ model: p.model, value: c }, { throughput, p99Ms: c / throughput * 1000 })
        .result;
    }));
  };
  return { measure, calls };
}

async function search(...argv: string[]) {
  return await searchWith(together, ...argv);
}

async function searchWith(model: typeof together, ...argv: string[]) {
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
  const { measure, calls } = model(variants);
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
  // The models' own together, then 1 and 2 instances x max batch 4 of each with each: 5 combinations.
  assert.deepEqual(allCombinations(plans).map((c) => c.name), [
    "a_config_default+b_config_default",
    "a_config_0+b_config_0",
    "a_config_0+b_config_1",
    "a_config_1+b_config_0",
    "a_config_1+b_config_1",
  ]);
  assert.equal(outcome.combinations.length, 5);
  // Both models are measured at every point, together, each at its own load.
  assert.ok(calls.every((c) => /^a_config_\w+@\d+ b_config_\w+@\d+$/.test(c)), calls.join("\n"));
  assert.ok(calls.some((c) => /@(\d+) .*@(?!\1$)\d+$/.test(c)), calls.join("\n"));
  const [best] = rankCombinations(outcome.combinations, outcome.models);
  // a weighs 3: its two instances win the shared cores (a 533/s, b 267/s, three instances on two
  // cores) over one each (400/s each).
  assert.equal(best!.outcome.combination.name, "a_config_1+b_config_0");
  const text = formatConcurrentSummary(outcome, { numConfigs: 2 });
  assert.match(
    text,
    /^Models a, b measured together: 5 combinations, \d+ points; weighting a 3, b 1/,
  );
  assert.match(
    text,
    /Best a_config_1\+b_config_0:\n +a: a_config_1 \(2:CPU, max batch 4\) at concurrency \d+: 533.3 infer\/sec/,
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

const LIMITS = (a: number, b: number) =>
  JSON.stringify({
    a: { constraints: { perf_latency_p99: { max: a } } },
    b: { constraints: { perf_latency_p99: { max: b } } },
  });

/** a within 35 ms and b within 45 ms, at concurrencies up to 32. */
const TIGHT = ["--profile-models", LIMITS(35, 45), "--run-config-search-max-concurrency", "32"];

Deno.test("concurrent brute search: each model's load on its own, the best the analytical one", async () => {
  const { outcome, calls } = await searchWith(
    saturating,
    ...TIGHT,
  );
  const [best] = rankCombinations(outcome.combinations, outcome.models);
  // a (2 x 4 x 100/s = 800/s): (c + 4) / 800 <= 35 ms up to 24, so 16 (25 ms, 640/s); b (400/s):
  // (c + 4) / 400 <= 45 ms up to 14, so 8 (30 ms, 266.7/s).
  assert.equal(best!.outcome.combination.name, "a_config_1+b_config_1");
  assert.deepEqual(best!.best.parts.map((p) => p.point.value), [16, 8]);
  assert.deepEqual(best!.best.parts.map((p) => Math.round(p.result.client.throughput)), [640, 267]);
  // Nested as Model Analyzer's generators: under each load of a, b's loads up to the first beyond
  // its limit; a's loads end at the first where a is beyond its own at every load of b.
  const under = (combination: string, a: number) =>
    calls.filter((c) =>
      c.startsWith(`${combination.split("+")[0]}@${a} ${combination.split("+")[1]}@`)
    )
      .map((c) => Number(c.split("@").at(-1)));
  assert.deepEqual(under("a_config_1+b_config_1", 16), [1, 2, 4, 8, 16]);
  assert.deepEqual(
    [...new Set(calls.filter((c) => c.startsWith("a_config_1@")).map((c) => c.split(" ")[0]))],
    [
      "a_config_1@1",
      "a_config_1@2",
      "a_config_1@4",
      "a_config_1@8",
      "a_config_1@16",
      "a_config_1@32",
    ],
  );
  // Bounded: far fewer than every pair of the 6 loads for each of the 5 combinations.
  assert.ok(calls.length < 5 * 36 / 2, String(calls.length));
  // The CSV names each model's own load.
  const csv = formatConcurrentCsv(outcome, [
    "model_name",
    "concurrency",
    "combination",
    "satisfies_constraints",
  ]).split("\n");
  assert.deepEqual(csv.slice(1, 3), [
    "a,16,a_config_1+b_config_1,Yes",
    "b,8,a_config_1+b_config_1,Yes",
  ]);
  const page = renderConcurrentHtml(outcome, { version: "test", numConfigs: 3 });
  assert.match(page, /Model: a and b/);
  assert.match(
    page,
    /the combination of <strong>a_config_1<\/strong> and <strong>b_config_1<\/strong>/,
  );
  assert.match(
    page,
    /data-combination="a_config_1\+b_config_1"><td class="text">a_config_1, b_config_1<\/td><td class="text">a_config_1 at concurrency 16 \+ b_config_1 at concurrency 8<\/td><td>\(4, 4\)<\/td>/,
  );
  assert.match(page, /<strong>906.7<\/strong> \(640, 266.7\)/);
  const [detailed] = findCombinations(outcome, ["a_config_1+b_config_1"]);
  const html = renderCombinationHtml(outcome, { combination: detailed!, version: "test" });
  assert.match(html, /<tr><td class="text">concurrency 16<\/td><td>640<\/td>/);
  assert.throws(
    () => findCombinations(outcome, ["a_config_9+b_config_0"]),
    /Unknown combination a_config_9\+b_config_0 for --report-model-configs/,
  );
});

Deno.test("concurrent quick search: each model at the concurrency its coordinates give, then swept", async () => {
  const { outcome, calls } = await searchWith(
    saturating,
    "--profile-models",
    LIMITS(35, 65),
    "--run-config-search-max-concurrency",
    "32",
    "--run-config-search-mode",
    "quick",
  );
  // The models' own (2 x max batch 2 x 1 instance: 4 each), then the climb from 1 instance x max
  // batch 4 each (8 each), a's second instance (16), b's (16), each model's load 2 x its max batch
  // x its instances; then the sweep of the best and the own at one load for both.
  assert.deepEqual(calls.slice(0, 4), [
    "a_config_default@4 b_config_default@4",
    "a_config_0@8 b_config_0@8",
    "a_config_1@16 b_config_0@8",
    "a_config_1@16 b_config_1@16",
  ]);
  assert.ok(calls.slice(4).every((c) => /@(\d+) .*@\1$/.test(c)), calls.join("\n"));
  const [best] = rankCombinations(outcome.combinations, outcome.models);
  assert.equal(best!.outcome.combination.name, "a_config_1+b_config_1");
  assert.deepEqual(best!.best.parts.map((p) => p.point.value), [16, 16]);
  const brute = await searchWith(saturating, "--profile-models", LIMITS(35, 65));
  assert.ok(calls.length < brute.calls.length / 2, `${calls.length} ${brute.calls.length}`);
});

Deno.test("concurrent Optuna search: one study over both models' coordinates and loads", async () => {
  const { outcome, calls } = await searchWith(
    saturating,
    ...TIGHT,
    "--run-config-search-mode",
    "optuna",
    "--optuna-min-trials",
    "30",
    "--optuna-max-trials",
    "30",
    "--concurrency-sweep-disable",
  );
  // The baseline (the models' own at 2 x max batch x instances), then a trial a point.
  assert.equal(calls[0], "a_config_default@4 b_config_default@4");
  assert.ok(calls.length <= 31, String(calls.length));
  assert.ok(calls.some((c) => /@(\d+) .*@(?!\1$)\d+$/.test(c)), calls.join("\n"));
  const [best] = rankCombinations(outcome.combinations, outcome.models);
  // Every trial is one point of the combination the sampler suggests; the best is a candidate
  // of at least 80 % of the analytical best's total (906.7/s).
  const total = best!.best.parts.reduce((n, p) => n + p.result.client.throughput, 0);
  assert.ok(total > 0.8 * 906.7 && total <= 906.7 + 1e-6, String(total));
});
