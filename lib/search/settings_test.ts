import assert from "node:assert/strict";
import { parseArgv } from "../cli/args.ts";
import { UsageError } from "../types/errors.ts";
import { buildSearchConfig, withFlags } from "./config.ts";
import { acrossModels, formatSearchSummary } from "./report.ts";
import { bruteVariants, ensembleSteps, ensembleVariants } from "./variants.ts";
import { record } from "../sweep/testdata/records.ts";

const search = (...argv: string[]) =>
  buildSearchConfig(parseArgv(["profile", "--model-repository", "r", ...argv]).options);

const errorsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error.errors;
    throw error;
  }
  return [];
};

Deno.test("perf_analyzer_flags: global, or a model's own in its place; the search's options refused", () => {
  const config = search(
    "--profile-models",
    '{"a":{"perf_analyzer_flags":{"percentile":90,"shape":["INPUT0:16"]}},"b":null}',
    "--perf-analyzer-flags",
    "percentile=95,measurement_mode=count_windows",
  );
  const [a, b] = config.models;
  assert.deepEqual(a!.flags, { percentile: "90", shape: ["INPUT0:16"] });
  assert.deepEqual(b!.flags, { percentile: "95", "measurement-mode": "count_windows" });
  const points = withFlags(config.pointOptions, b);
  assert.equal(points.get("measurement-mode"), "count_windows");
  assert.equal(config.pointOptions.has("percentile"), false);
  assert.deepEqual(
    errorsOf(() =>
      search(
        "--profile-models",
        '{"a":{"perf_analyzer_flags":{"concurrency-range":"1:4","no-such":1,"percentile":"x"}}}',
      )
    ),
    [
      'Option "concurrency-range" can not be set in perf_analyzer_flags (profile_models: a): the search sets it',
      'Unknown option "no-such" in perf_analyzer_flags (profile_models: a)',
      'Invalid value "x" for --percentile: expected an integer (perf_analyzer_flags of a)',
    ],
  );
});

Deno.test("triton_server_environment: the same for every model, local mode only; cpu_only", () => {
  const config = search(
    "--profile-models",
    '{"a":{"triton_server_environment":{"OMP_NUM_THREADS":2},"cpu_only":true}}',
  );
  assert.deepEqual(config.models[0]!.environment, { OMP_NUM_THREADS: "2" });
  assert.equal(config.models[0]!.cpuOnly, true);
  const gpu = { max_batch_size: 4, instance_group: [{ kind: "KIND_GPU", count: 1 }] };
  const variants = bruteVariants("a", gpu, {
    instanceCounts: [1, 2],
    maxBatchSizes: [4],
    cpuOnly: true,
  });
  assert.deepEqual(variants.slice(1).map((v) => v.config.instance_group), [
    [{ count: 1, kind: "KIND_CPU" }],
    [{ count: 2, kind: "KIND_CPU" }],
  ]);
  assert.deepEqual(
    errorsOf(() =>
      search(
        "--profile-models",
        '{"a":{"triton_server_environment":{"X":"1"}},"b":{"cpu_only":"yes"}}',
        "--triton-launch-mode",
        "remote",
      )
    ),
    [
      "Invalid cpu_only (profile_models: b): expected true or false",
      "The models' triton_server_environment differ: one server serves them all, so it must be the same",
      "triton_server_environment applies to --triton-launch-mode local only (given with remote)",
    ],
  );
  assert.deepEqual(
    search("--profile-models", "a,b", "--triton-server-environment", "X=1").models.map((m) =>
      m.environment
    ),
    [{ X: "1" }, { X: "1" }],
  );
});

Deno.test("output fields: Model Analyzer's names, unknown ones refused; num_top_model_configs ranks across models", () => {
  const config = search(
    "--profile-models",
    "a,b",
    "--inference-output-fields",
    "model_name,perf_server_queue,perf_latency_avg",
    "--num-top-model-configs",
    "2",
  );
  assert.deepEqual(config.inferenceFields, ["model_name", "perf_server_queue", "perf_latency_avg"]);
  assert.deepEqual(
    errorsOf(() =>
      search("--profile-models", "a", "--server-output-fields", "gpu_used_memory,model_name")
    ),
    [
      "Unknown field gpu_used_memory for --server-output-fields: expected model_name, model_config_path, cpu_used_ram (no GPU metrics: this server has none)",
    ],
  );
  const variant = (model: string, throughput: number) => ({
    variant: { name: `${model}_config_0`, model, config: { max_batch_size: 4 } },
    records: [record({ model: `${model}_config_0` }, { throughput, p99Ms: 10 })],
  });
  const outcome = {
    models: config.models.map((model, i) => ({
      model,
      variants: [variant(model.name, 100 * (i + 1))],
    })),
    measured: 2,
    resumed: 0,
    interrupted: false,
  };
  const across = acrossModels(outcome, { count: 2, across: config.across })!;
  assert.equal(across.model.name, "Best Configs Across All Models");
  const text = formatSearchSummary({ ...outcome, models: [across] }, { numConfigs: 2 });
  assert.match(text, /^Model Best Configs Across All Models: 2 configurations/);
  assert.match(text, /Best b_config_0: .*\n.*200 infer\/sec[^]*#2 +a_config_0/);
  assert.equal(acrossModels(outcome, { count: 0, across: config.across }), undefined);
});

Deno.test("ensemble variants: combinations of the composing models' variants, steps calling them", () => {
  const step = (model: string, from: string, to: string) => ({
    model_name: model,
    model_version: -1,
    input_map: { INPUT0: from },
    output_map: { OUTPUT0: to },
  });
  const ensemble = {
    platform: "ensemble",
    max_batch_size: 8,
    ensemble_scheduling: { step: [step("a", "INPUT0", "mid"), step("b", "mid", "OUTPUT0")] },
  };
  assert.deepEqual(ensembleSteps(ensemble), ["a", "b"]);
  assert.deepEqual(ensembleSteps({ max_batch_size: 8 }), []);
  const ranges = { instanceCounts: [1, 2], maxBatchSizes: [4] };
  const composing = ["a", "b"].map((name) => ({
    name,
    variants: bruteVariants(name, { max_batch_size: 8, instance_group: [{ count: 1 }] }, ranges),
  }));
  const variants = ensembleVariants("e", ensemble, composing);
  // The own configurations together, then 2 x 2 combinations of the searched ones.
  assert.deepEqual(variants.map((v) => v.composing!.map((c) => c.name).join("+")), [
    "a_config_default+b_config_default",
    "a_config_0+b_config_0",
    "a_config_0+b_config_1",
    "a_config_1+b_config_0",
    "a_config_1+b_config_1",
  ]);
  assert.deepEqual(variants.map((v) => v.name), [
    "e_config_default",
    "e_config_0",
    "e_config_1",
    "e_config_2",
    "e_config_3",
  ]);
  const steps = (v: (typeof variants)[number]) =>
    (v.config.ensemble_scheduling as { step: Array<{ model_name: string }> }).step.map((s) =>
      s.model_name
    );
  assert.deepEqual(steps(variants[3]!), ["a_config_1", "b_config_0"]);
  assert.deepEqual(steps(variants[0]!), ["a_config_default", "b_config_default"]);
  // At most the composing models' smallest max_batch_size (4 in the searched ones).
  assert.deepEqual(variants.map((v) => v.config.max_batch_size), [8, 4, 4, 4, 4]);
  // Each step's input and output maps are kept.
  assert.deepEqual(
    (variants[1]!.config.ensemble_scheduling as { step: unknown[] }).step[1],
    { ...step("b_config_0", "mid", "OUTPUT0") },
  );
});
