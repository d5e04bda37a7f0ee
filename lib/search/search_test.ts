import assert from "node:assert/strict";
import { parseGoals, type PointRecord } from "../sweep/mod.ts";
import type { LevelResult } from "../types/results.ts";
import { UsageError } from "../types/errors.ts";
import { buildSearchConfig, powersOfTwo } from "./config.ts";
import { isSearch } from "./kind.ts";
import { compareResults, parseObjectives } from "./objectives.ts";
import { formatInferenceCsv } from "./report.ts";
import { defaultInferenceFields, instanceGroupText } from "./fields.ts";
import { sweepStop } from "./walks.ts";
import { bruteVariants, expand, manualVariants, modelConfigChange } from "./variants.ts";

const BASE = {
  backend: "identity",
  max_batch_size: 8,
  instance_group: [{ kind: "KIND_CPU", count: 1 }],
  parameters: { execute_delay_ms: { string_value: "10" } },
};

function result(throughput: number, p99Ms = 10, extra: Partial<LevelResult> = {}): LevelResult {
  return {
    mode: "concurrency",
    value: 1,
    stable: true,
    windows: [],
    client: {
      requestCount: 1,
      responseCount: 1,
      errorCount: 0,
      durationMs: 1,
      throughput,
      avgLatencyUs: p99Ms * 800,
      stdLatencyUs: 0,
      avgSendUs: 0,
      avgRecvUs: 0,
      avgWaitUs: 0,
      percentilesUs: new Map([[99, p99Ms * 1000]]),
    },
    ...extra,
  } as LevelResult;
}

const record = (throughput: number, p99Ms = 10, value = 1): PointRecord => ({
  point: {
    model: "m_config_0",
    batchSize: 1,
    protocol: "http",
    inputData: "random",
    mode: "concurrency",
    value,
  },
  result: result(throughput, p99Ms),
  measuredAt: "",
});

Deno.test("brute variants: the default, then instance counts x powers of two with dynamic batching", () => {
  assert.deepEqual(powersOfTwo(1, 128), [1, 2, 4, 8, 16, 32, 64, 128]);
  assert.deepEqual(powersOfTwo(3, 20), [4, 8, 16]);
  const variants = bruteVariants("m", BASE, { instanceCounts: [1, 2], maxBatchSizes: [1, 4] });
  assert.deepEqual(variants.map((v) => v.name), [
    "m_config_default",
    "m_config_0",
    "m_config_1",
    "m_config_2",
    "m_config_3",
  ]);
  assert.deepEqual(variants[0]!.config, { ...BASE, name: "m_config_default" });
  assert.deepEqual(variants[4]!.config, {
    ...BASE,
    name: "m_config_3",
    max_batch_size: 4,
    instance_group: [{ count: 2, kind: "KIND_CPU" }],
    dynamic_batching: {},
  });
  // A model that does not batch varies the instance count only.
  const unbatched = bruteVariants("u", { ...BASE, max_batch_size: 0 }, {
    instanceCounts: [1, 2, 3],
    maxBatchSizes: [1, 4],
  });
  assert.deepEqual(unbatched.map((v) => v.config.instance_group?.[0]?.count), [1, 1, 2, 3]);
  assert.ok(unbatched.every((v) => v.config.dynamic_batching === undefined));
});

Deno.test("manual variants: lists are swept, mappings merge, bad types are refused", () => {
  assert.deepEqual(expand({ a: [1, 2], b: { c: ["x", "y"] } }), [
    { a: 1, b: { c: "x" } },
    { a: 1, b: { c: "y" } },
    { a: 2, b: { c: "x" } },
    { a: 2, b: { c: "y" } },
  ]);
  assert.deepEqual(expand({ preferred_batch_size: [[4, 8]] }), [{ preferred_batch_size: [4, 8] }]);
  const variants = manualVariants("m", BASE, {
    instance_group: [{ kind: "KIND_CPU", count: [1, 2] }],
    dynamic_batching: { max_queue_delay_microseconds: [0, 100] },
    parameters: { execute_delay_ms: { string_value: "20" } },
  });
  assert.equal(variants.length, 5);
  assert.deepEqual(variants[4]!.config, {
    ...BASE,
    name: "m_config_3",
    instance_group: [{ kind: "KIND_CPU", count: 2 }],
    dynamic_batching: { max_queue_delay_microseconds: 100 },
    parameters: { execute_delay_ms: { string_value: "20" } },
  });
  assert.throws(
    () => manualVariants("m", BASE, { max_batch_size: ["many"] }),
    (e) =>
      e instanceof UsageError &&
      /Invalid model_config_parameters of "m": Expected an integer/.test(e.message),
  );
});

Deno.test("objectives: Model Analyzer's weighted relative gains", () => {
  const throughput = parseObjectives([]);
  assert.ok(compareResults(result(110), result(100), throughput) > 0);
  const mixed = parseObjectives(["perf_throughput=3", "perf_latency_p99=1"]);
  assert.deepEqual(mixed.map((o) => o.weight), [0.75, 0.25]);
  // +10 % throughput is worth more than +20 % latency at 3:1.
  assert.ok(compareResults(result(110, 12), result(100, 10), mixed) > 0);
  assert.ok(compareResults(result(110, 20), result(100, 10), mixed) < 0);
  assert.throws(() => parseObjectives(["speed=1"]), UsageError);
  const ram = parseObjectives(["cpu_used_ram"]);
  assert.ok(
    compareResults(result(1, 1, { serverRamMb: 10 }), result(1, 1, { serverRamMb: 20 }), ram) > 0,
  );
});

Deno.test("a concurrency sweep stops at a 5 % plateau over 4 points, or past a latency bound", () => {
  const goals = { goals: parseGoals("throughput", ["max-perf_latency_p99=50"]) };
  const rising = [100, 200, 400, 800].map((t) => record(t));
  assert.equal(sweepStop(rising, goals), undefined);
  const flat = [100, 103, 104, 105].map((t) => record(t));
  assert.match(sweepStop(flat, goals)!, /throughput gained 5\.0 % over the last 4 points/);
  assert.equal(sweepStop([100, 103, 104, 106].map((t) => record(t)), goals), undefined);
  assert.match(sweepStop([record(100, 60)], goals)!, /p99 latency 60\.0 > 50 msec/);
});

Deno.test("metrics-model-inference.csv: Model Analyzer's columns, best first", () => {
  const variant = {
    name: "m_config_0",
    model: "m",
    config: { ...BASE, name: "m_config_0", instance_group: [{ kind: "KIND_CPU", count: 2 }] },
  };
  const model = {
    name: "m",
    batchSizes: [1],
    objectives: parseObjectives([]),
    goals: parseGoals("throughput", ["max-perf_latency_p99=50"]),
  };
  const csv = formatInferenceCsv({
    models: [{
      model,
      variants: [{ variant, records: [record(90, 5, 1), record(400, 80, 8), record(180, 20, 2)] }],
    }],
    measured: 3,
    resumed: 0,
    interrupted: false,
  }, defaultInferenceFields(false));
  assert.equal(
    csv,
    `Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)
m,1,2,m_config_0,2:CPU,8,Yes,180.0,20.0
m,1,1,m_config_0,2:CPU,8,Yes,90.0,5.0
m,1,8,m_config_0,2:CPU,8,No,400.0,80.0
`,
  );
  assert.equal(instanceGroupText({}), "1:AUTO");
});

Deno.test("a search is --profile-models with --model-repository; its options are checked together", () => {
  const raw = (entries: Record<string, string | boolean | string[]>) =>
    new Map(Object.entries(entries));
  assert.equal(isSearch(raw({ "profile-models": ["m"] })), false);
  assert.equal(isSearch(raw({ "profile-models": ["m"], "model-repository": "r" })), true);
  const config = buildSearchConfig(raw({
    "profile-models": [
      '{"m":{"parameters":{"concurrency":[2,4]},"objectives":{"perf_throughput":2,"perf_latency_p99":2}}}',
    ],
    "model-repository": "r",
    "run-config-search-max-concurrency": "8",
    "run-config-search-max-instance-count": "2",
  }));
  assert.deepEqual(config.concurrencies, [1, 2, 4, 8]);
  assert.deepEqual(config.instanceCounts, [1, 2]);
  assert.deepEqual(config.models[0]!.concurrency, [2, 4]);
  assert.deepEqual(config.models[0]!.objectives.map((o) => o.weight), [0.5, 0.5]);
  const perModel = buildSearchConfig(raw({
    "profile-models": ['{"a":{"constraints":{"perf_latency_p99":{"max":20}}},"b":null}'],
    "model-repository": "r",
    constraints: ["min-perf_throughput=5"],
  }));
  assert.deepEqual(
    perModel.models.map((m) =>
      m.goals.constraints.map((c) => `${c.bound}-${c.metric.name}=${c.limit}`)
    ),
    [["max-p99-latency=20"], ["min-throughput=5"]],
  );
  assert.equal(config.pointOptions.has("model-repository"), false);
  assert.throws(
    () =>
      buildSearchConfig(raw({
        "profile-models": ["m"],
        "model-repository": "r",
        "run-config-search-min-instance-count": "3",
        "run-config-search-max-instance-count": "2",
        "concurrency-range": "1:4",
      })),
    (e) =>
      e instanceof UsageError && e.errors.length === 2 &&
      /min-instance-count 3 is above/.test(e.errors.join()),
  );
  assert.throws(
    () =>
      buildSearchConfig(
        raw({ "profile-models": ["m"], "model-repository": "r", "triton-launch-mode": "docker" }),
      ),
    /docker is not supported/,
  );
});

Deno.test("a changed model configuration is named by its first differing field, in one line", () => {
  const text = (extra: string) =>
    `backend: "identity"\nmax_batch_size: 4\ninstance_group [ { kind: KIND_CPU, count: 1 } ]\n${extra}`;
  const same = text("");
  assert.equal(
    modelConfigChange(["a", "b"], [same, same], [same, same.replace("count: 1", "count: 3")]),
    "config.pbtxt of b: instance_group[0].count 1 (now 3)",
  );
  assert.equal(
    modelConfigChange(["a"], [same], [
      text("dynamic_batching { max_queue_delay_microseconds: 100 }"),
    ]),
    'config.pbtxt of a: dynamic_batching not set (now {"max_queue_delay_microseconds":100})',
  );
  assert.equal(
    modelConfigChange(["a", "b"], [same], [same, same]),
    "config.pbtxt of b: not in the checkpoint",
  );
});
