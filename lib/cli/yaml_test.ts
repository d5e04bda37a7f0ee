import assert from "node:assert/strict";
import { buildProfileConfig } from "./config.ts";
import { parseArgv, withConfigFile } from "./args.ts";
import { formatHelp } from "./help.ts";
import { OPTIONS } from "./options.ts";
import { usageErrors } from "./testdata/usage_errors.ts";
import { parseConfigYaml, placeholders, readConfigFile } from "./yaml.ts";

const PLACEHOLDERS = new URL("../../fixtures/sweep/placeholders.yaml", import.meta.url).pathname;

function yaml(text: string, command: "profile" | "serve" | "report" = "profile") {
  return parseConfigYaml(text, { file: "c.yaml", command });
}

function yamlErrors(text: string, command: "profile" | "serve" | "report" = "profile"): string[] {
  return usageErrors(() => yaml(text, command));
}

Deno.test("every placeholder type becomes the raw value the command line gives", async () => {
  const raw = await readConfigFile(PLACEHOLDERS, { command: "profile" });
  assert.deepEqual(Object.fromEntries(raw), {
    "profile-models": ["simple,batched"],
    protocol: "http",
    "input-data": ["random", "zero"],
    "batch-size": "1:2:1",
    "concurrency-range": "1:5:2",
    "measurement-interval": 200,
    "stability-percentage": 50.5,
    async: true,
    url: ["127.0.0.1:8000"],
    header: ["X-Sweep: placeholders"],
    verbose: 1,
    constraints: ["max-p99-latency=20", "min-throughput=10"],
    objective: "p95-latency",
    "checkpoint-directory": "/tmp/inferperf-placeholders",
  });
});

Deno.test("YAML and argv produce the same configuration", () => {
  const fromYaml = buildProfileConfig(yaml(`
model-name: simple
concurrency-range: {start: 2, stop: 8, step: 2}
measurement-interval: 250
percentile: 95
shape: ["IN:3,4"]
header: "X-A: 1"
async: true
verbose: 2
`));
  const fromArgv = buildProfileConfig(
    parseArgv([
      "-m",
      "simple",
      "--concurrency-range",
      "2:8:2",
      "-p",
      "250",
      "--percentile",
      "95",
      "--shape",
      "IN:3,4",
      "-H",
      "X-A: 1",
      "-a",
      "-vv",
    ]).options,
  );
  assert.deepEqual(fromYaml, fromArgv);
});

Deno.test("a <range> may omit step, and lists and comma-delimited lists fill sweep options", () => {
  assert.equal(yaml("batch-size: {start: 2, stop: 6}").get("batch-size"), "2:6:1");
  assert.equal(yaml("batch-size: [1, 2, 4]").get("batch-size"), "1,2,4");
  assert.equal(yaml('batch-size: "1, 2, 4"').get("batch-size"), "1, 2, 4");
  assert.equal(yaml("concurrency-range: [1, 4]").get("concurrency-range"), "1,4");
  assert.equal(yaml("concurrency-range: 1:8").get("concurrency-range"), "1:8");
  assert.equal(yaml("protocol: http,grpc").get("protocol"), "http,grpc");
  assert.deepEqual(yaml("profile-models: [a, b]").get("profile-models"), ["a", "b"]);
  assert.deepEqual(yaml("").size, 0);
  assert.equal(yaml("verbose: true").get("verbose"), 1);
});

Deno.test("unknown keys and wrong types name the key and the line", () => {
  const errors = yamlErrors(`url: localhost:8000
modelname: simple
Batch_Size: 2
measurement-interval: fast
async: yes
protocol: [http, quic]
concurrency-range: {start: 1, end: 4}
constraints: [max-p99-latency=20]
batch-size: {start: 1}
`);
  assert.deepEqual(errors, [
    'Unknown key "modelname" at c.yaml line 2',
    'Unknown key "Batch_Size" at c.yaml line 3; did you mean "batch-size"?',
    'Invalid value for "measurement-interval" at c.yaml line 4: expected <int>',
    'Invalid value for "async" at c.yaml line 5: expected <boolean>',
    'Invalid value "quic" for "protocol" at c.yaml line 6: expected one of http, grpc',
    'Unknown key "end" in the <range> of "concurrency-range" at c.yaml line 7: expected start, stop and optionally step',
    'Invalid value for "batch-size" at c.yaml line 9: expected <int>, <list>, <comma-delimited-list> or <range>',
  ]);
});

Deno.test("keys of other commands, command-line-only keys and bad YAML are errors with lines", () => {
  assert.deepEqual(yamlErrors("http-port: 8000\nconfig: other.yaml\n"), [
    'Key "http-port" at c.yaml line 1 does not apply to "inferperf profile"',
    'Key "config" at c.yaml line 2 can only be given on the command line',
  ]);
  assert.deepEqual(yaml("http-port: 9000", "serve").get("http-port"), 9000);
  assert.match(yamlErrors("url: [a\nb: c\n")[0]!, /^Invalid YAML at c\.yaml line \d+: /);
  assert.match(yamlErrors("url: a\nurl: b\n")[0]!, /^Invalid YAML at c\.yaml line 2: .*unique/);
  assert.deepEqual(yamlErrors("- a\n- b\n"), [
    "Invalid config file c.yaml: expected option names with their values (a <dict>)",
  ]);
});

Deno.test("the command line overrides the config file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/run.yaml`;
    await Deno.writeTextFile(
      file,
      'model-name: simple\nmeasurement-interval: 250\nheader: ["A: 1"]\n',
    );
    const raw = await withConfigFile(
      parseArgv(["profile", "--config", file, "-p", "400", "-H", "B: 2"]),
    );
    const config = buildProfileConfig(raw);
    assert.equal(config.model, "simple");
    assert.equal(config.measurementIntervalMs, 400);
    assert.deepEqual(config.headers, { B: "2" });
    assert.equal(raw.has("config"), false);
    await assert.rejects(
      withConfigFile(parseArgv(["--config", `${dir}/missing.yaml`])),
      /Can not read the config file ".*missing\.yaml"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every option has a long name and YAML placeholders; --help marks sweep options", () => {
  for (const def of OPTIONS) {
    assert.match(def.name, /^[a-z][a-z0-9-]+$/);
    assert.ok(placeholders(def).length > 0, def.name);
  }
  assert.match(
    formatHelp(),
    /--batch-size N +Batch size of each request\. \[default: 1\] \[sweep\]/,
  );
  assert.match(formatHelp(), /--config FILE\.yaml/);
});

Deno.test("Model Analyzer's spelling: snake_case keys, bounds, weights and per-model mappings", () => {
  const raw = yaml(`
model_repository: /models
run_config_search_max_instance_count: 2
constraints:
  perf_latency_p99: {max: 20}
  perf_throughput: {min: 5}
objectives: [perf_throughput]
triton_server_flags: {backend-directory: /b}
profile_models:
  slow:
    model_config_parameters:
      max_batch_size: [1, 2]
`);
  assert.deepEqual(Object.fromEntries(raw), {
    "model-repository": "/models",
    "run-config-search-max-instance-count": 2,
    constraints: ["max-perf_latency_p99=20", "min-perf_throughput=5"],
    objectives: ["perf_throughput"],
    "triton-server-flags": ["backend-directory=/b"],
    "profile-models": ['{"slow":{"model_config_parameters":{"max_batch_size":[1,2]}}}'],
  });
  assert.deepEqual(
    yaml("objectives: {perf_throughput: 10, perf_latency_p99: 5}").get("objectives"),
    [
      "perf_throughput=10",
      "perf_latency_p99=5",
    ],
  );
  assert.deepEqual(yamlErrors("constraints: {perf_latency_p99: {below: 3}}"), [
    'Invalid value for "constraints" at c.yaml line 1: expected <dict>',
  ]);
});
