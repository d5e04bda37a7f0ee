import assert from "node:assert/strict";
import {
  DEFAULT_MODELS,
  loadModelConfig,
  ModelConfigError,
  parseModelConfig,
  resolveModelSpecs,
  validateModelConfigs,
} from "./config.ts";

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ModelConfigError, String(error));
    return error.problems;
  }
  assert.fail("expected a ModelConfigError");
}

Deno.test("the built-in models are valid and get their defaults", () => {
  const specs = resolveModelSpecs(DEFAULT_MODELS, "built-in");
  const names = specs.map((s) => s.name);
  assert.deepEqual(names.slice(0, 4), ["simple", "slow", "identity_fp32", "batched"]);
  for (const name of ["identity_all", "sub_add", "identity_int32", "identity_string"]) {
    assert.ok(names.includes(name), name);
  }
  const slow = specs[1];
  assert.equal(slow.compute, 10);
  assert.equal(slow.maxBatchSize, 0);
  assert.deepEqual(slow.versions, ["1"]);
  assert.equal(specs[3].dynamicBatching?.maxQueueDelayMs, 2);
  assert.deepEqual(specs[3].dynamicBatching?.preferredBatchSizes, [4, 8]);
});

Deno.test("every problem is reported at once, naming the model and the field", () => {
  const problems = problemsOf(() =>
    validateModelConfigs([
      {
        name: "a",
        kind: "add_sub",
        instances: 0,
        max_batch_size: -1,
        inputs: [{ name: "X", datatype: "FLOAT", dims: [16] }],
        outputs: [{ name: "Y", datatype: "INT32", dims: [0] }],
        compute_ms: { dist: "normal", mean_ms: 5 },
        typo: 1,
      },
      {
        name: "b",
        kind: "echo",
        inputs: [],
        outputs: [{ name: "Y", datatype: "INT32", dims: [1] }],
        dynamic_batching: { max_queue_delay_ms: 1 },
      },
      {
        name: "a",
        kind: "identity",
        inputs: [{ name: "X", datatype: "INT32", dims: [1] }],
        outputs: [{ name: "Y", datatype: "INT32", dims: [1] }],
      },
    ], "test.yaml")
  );
  const expected = [
    'models[0] ("a"): field "typo" is not a known field',
    'models[0] ("a"): field "max_batch_size" must be an integer >= 0, got -1',
    'models[0] ("a"): field "inputs[0].datatype" must be a KServe v2 datatype',
    'models[0] ("a"): field "outputs[0].dims" must be a list of positive integers or -1',
    'models[0] ("a"): field "compute_ms.stddev_ms" is required by the "normal" distribution',
    'models[0] ("a"): field "instances" must be an integer >= 1, got 0',
    'models[1] ("b"): field "kind" must be one of add_sub, identity, zeros, accumulate, bls, got "echo"',
    'models[1] ("b"): field "inputs" must be a non-empty list of tensors',
    'models[1] ("b"): field "dynamic_batching" needs max_batch_size > 0',
    'models[2] ("a"): field "name" repeats the name of models[0]',
  ];
  assert.equal(problems.length, expected.length, problems.join("\n"));
  for (const text of expected) {
    assert.ok(
      problems.some((p) => p.startsWith(text)),
      `missing "${text}" in\n${problems.join("\n")}`,
    );
  }
});

Deno.test("behaviour constraints are checked per kind", () => {
  const problems = problemsOf(() =>
    validateModelConfigs([{
      name: "s",
      kind: "add_sub",
      inputs: [
        { name: "A", datatype: "INT32", dims: [4] },
        { name: "B", datatype: "FP32", dims: [4] },
      ],
      outputs: [{ name: "C", datatype: "INT32", dims: [5] }],
    }, {
      name: "i",
      kind: "identity",
      inputs: [{ name: "A", datatype: "INT32", dims: [4] }],
      outputs: [
        { name: "B", datatype: "INT64", dims: [4] },
        { name: "C", datatype: "INT32", dims: [4] },
      ],
    }], "inline")
  );
  assert.deepEqual(problems, [
    'models[0] ("s"): field "outputs" must list 2 tensors for "add_sub", got 1',
    'models[0] ("s"): field "inputs[1].datatype" must equal inputs[0].datatype ("INT32")',
    'models[0] ("s"): field "outputs[0].dims" must equal inputs[0].dims ([4])',
    'models[1] ("i"): field "outputs" must not outnumber inputs for "identity" (1)',
    'models[1] ("i"): field "outputs[0].datatype" must equal inputs[0].datatype ("INT32")',
  ]);
});

Deno.test("the error message names the source", () => {
  assert.throws(
    () => parseModelConfig("models: [1]", "models.yaml"),
    (e: Error) =>
      e instanceof ModelConfigError && e.source === "models.yaml" &&
      e.message.startsWith('Invalid model configuration "models.yaml" (1 problem):\n  models[0]'),
  );
  assert.throws(
    () => parseModelConfig("models: [", "broken.yaml"),
    (e: Error) => e instanceof ModelConfigError && e.message.includes('"broken.yaml"'),
  );
});

Deno.test("JSON and YAML files load, versions may be numbers", async () => {
  const fromJson = parseModelConfig(
    JSON.stringify([{
      name: "m",
      versions: [1, 3],
      kind: "zeros",
      inputs: [{ name: "A", datatype: "BYTES", dims: [-1] }],
      outputs: [{ name: "B", datatype: "FP32", dims: [-1] }],
    }]),
    "m.json",
  );
  assert.deepEqual(fromJson[0].versions, ["1", "3"]);
  assert.equal(fromJson[0].instances, 1);
  const example = await loadModelConfig(
    new URL("../../fixtures/models.yaml", import.meta.url).pathname,
  );
  assert.deepEqual(example.map((m) => m.name), [
    "simple",
    "resnet_like",
    "text_echo",
    "batched_fp16",
  ]);
  assert.deepEqual(example[1].versions, ["1", "2"]);
  await assert.rejects(
    loadModelConfig("/nonexistent/models.yaml"),
    (e: Error) => e instanceof ModelConfigError && e.message.includes('"/nonexistent/models.yaml"'),
  );
});

Deno.test("LLM models: defaults, and the streaming knobs checked", () => {
  const [spec] = resolveModelSpecs([{
    name: "l",
    llm: { ttft_ms: 5, itl_ms: 2, output_tokens: 3 },
  }], "t");
  assert.deepEqual(spec.llm, {
    ttftMs: 5,
    itlMs: 2,
    itlJitterMs: 0,
    outputTokens: 3,
    outputTokensStddev: 0,
    closeAfterStream: false,
    usage: true,
    errorRate: 0,
    errorAfterTokens: 1,
    errorKind: "event",
    chatTemplateTokens: 28,
    reasoningTokens: 0,
  });
  const llm = {
    ttft_ms: 5,
    itl_ms: 2,
    output_tokens: 3,
    itl_jitter_ms: 1.5,
    usage: "yes",
    error_rate: 2,
    error_kind: "explode",
  };
  assert.deepEqual(problemsOf(() => resolveModelSpecs([{ name: "l", llm }], "t")), [
    'models[0] ("l"): field "llm.itl_jitter_ms" must be at most half of itl_ms (1)',
    'models[0] ("l"): field "llm.error_rate" must be at most 1, got 2',
    'models[0] ("l"): field "llm.error_kind" must be one of event, abort, truncate, got "explode"',
    'models[0] ("l"): field "llm.usage" must be true or false, got "yes"',
  ]);
});
