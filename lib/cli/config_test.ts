import assert from "node:assert/strict";
import { buildProfileConfig, buildServeConfig, parseArgv, UsageError } from "./config.ts";
import { OPTIONS } from "./options.ts";

function config(...argv: string[]) {
  return buildProfileConfig(parseArgv(argv).options);
}

function usageErrors(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof UsageError) return e.errors;
    throw e;
  }
  throw new Error("Expected a UsageError");
}

Deno.test("perf_analyzer's defaults apply", () => {
  const c = config("-m", "simple");
  assert.equal(c.model, "simple");
  assert.equal(c.url, "localhost:8000");
  assert.deepEqual(c.concurrency, { start: 1, end: 1, step: 1 });
  assert.equal(c.measurementIntervalMs, 5000);
  assert.equal(c.measurementMode, "time_windows");
  assert.equal(c.measurementRequestCount, 50);
  assert.equal(c.stabilityPercentage, 10);
  assert.equal(c.maxTrials, 10);
  assert.equal(c.percentile, undefined);
  assert.equal(c.batchSize, 1);
  assert.deepEqual(c.inputData, ["random"]);
  assert.equal(c.inputTensorFormat, "binary");
  assert.equal(c.stringLength, 128);
  assert.equal(c.verbose, 0);
});

Deno.test("the issue's example command line parses", () => {
  const c = config(
    "-m",
    "simple",
    "-u",
    "localhost:8000",
    "--concurrency-range",
    "1:8:2",
    "-f",
    "perf.csv",
    "--percentile",
    "95",
  );
  assert.deepEqual(c.concurrency, { start: 1, end: 8, step: 2 });
  assert.equal(c.latencyReportFile, "perf.csv");
  assert.equal(c.percentile, 95);
});

Deno.test("getopt spellings: --opt=value, -vv, repeated lists, headers, shapes", () => {
  const c = config(
    "-msimple",
    "--percentile=99",
    "-vv",
    "-H",
    "Authorization: Bearer x:y",
    "--header=X-Trace:1",
    "--shape",
    "IN:0:3,224",
    "--shape",
    "B:1",
    "-a",
  );
  assert.equal(c.model, "simple");
  assert.equal(c.percentile, 99);
  assert.equal(c.verbose, 2);
  assert.deepEqual(c.headers, { Authorization: "Bearer x:y", "X-Trace": "1" });
  assert.deepEqual([...c.shapes], [["IN:0", [3, 224]], ["B", [1]]]);
  assert.equal(c.async, true);
});

Deno.test("every problem is reported at once, naming option and value", () => {
  const errors = usageErrors(() =>
    config(
      "--concurrency-range",
      "4:1",
      "-p",
      "abc",
      "--percentile",
      "100",
      "--measurement-mode",
      "forever",
      "-b",
      "0",
    )
  );
  assert.deepEqual(errors, [
    "Option -m/--model-name is required",
    'Invalid value "4:1" for --concurrency-range: the end must not be less than the start',
    'Invalid value "100" for --percentile: expected an integer from 1 to 99',
    'Invalid value "forever" for --measurement-mode: expected one of time_windows, count_windows',
    'Invalid value "abc" for -p/--measurement-interval: expected an integer',
    'Invalid value "0" for -b/--batch-size: expected an integer >= 1',
  ]);
});

Deno.test("unknown options, stray arguments and missing values are usage errors", () => {
  assert.deepEqual(usageErrors(() => parseArgv(["--bogus", "stray", "-m"])), [
    'Unknown option "--bogus"',
    'Unexpected argument "stray"',
    "Option -m/--model-name needs a value",
  ]);
  assert.deepEqual(usageErrors(() => parseArgv(["--async=yes"])), [
    'Option -a/--async takes no value, got "yes"',
  ]);
});

Deno.test("sweep rules: open end needs a threshold; binary search needs both", () => {
  assert.match(
    usageErrors(() => config("-m", "x", "--concurrency-range", "1:0"))[0]!,
    /can not both be 0/,
  );
  assert.match(
    usageErrors(() => config("-m", "x", "--concurrency-range", "1:8", "--binary-search"))[0]!,
    /--binary-search needs/,
  );
  assert.equal(config("-m", "x", "--concurrency-range", "2:0:2", "-l", "50").concurrency.end, 0);
  assert.match(usageErrors(() => config("-m", "x", "--sync", "--async"))[0]!, /together/);
});

Deno.test("options of features still to come fail clearly instead of being ignored", () => {
  const errors = usageErrors(() =>
    config("-m", "x", "--request-rate-range", "100", "-i", "grpc", "--input-data", "data.json")
  );
  assert.deepEqual(errors, [
    "Option --request-rate-range is not supported yet (it comes with open-loop load (request rate, intervals, schedules))",
    'Value "grpc" of -i/--protocol is not supported yet (it comes with gRPC support)',
    'Value "data.json" of --input-data is not supported yet (only random and zero are; files come with input data files)',
  ]);
});

Deno.test("subcommands, their options and help/version are recognised", () => {
  const serve = parseArgv(["serve", "--models", "m.yaml", "--http-port", "0"]);
  assert.equal(serve.command, "serve");
  assert.deepEqual(buildServeConfig(serve.options), {
    models: "m.yaml",
    host: "127.0.0.1",
    httpPort: 0,
    metricsPort: 8002,
  });
  assert.deepEqual(usageErrors(() => parseArgv(["serve", "-m", "x"])), [
    'Option -m/--model-name does not apply to "inferperf serve"',
  ]);
  assert.deepEqual(usageErrors(() => parseArgv(["--http-port", "1"])), [
    'Option --http-port does not apply to "inferperf profile"',
  ]);
  assert.equal(parseArgv(["demo", "-p", "500"]).command, "demo");
  assert.equal(parseArgv(["--help"]).action, "help");
  assert.equal(parseArgv(["serve", "-h"]).action, "help");
  assert.equal(parseArgv(["--version"]).action, "version");
  assert.equal(parseArgv(["profile", "-m", "x"]).command, "profile");
});

Deno.test("the option table is consistent", () => {
  const names = new Set<string>();
  const shorts = new Set<string>();
  for (const o of OPTIONS) {
    assert.ok(!names.has(o.name), `duplicate --${o.name}`);
    names.add(o.name);
    if (o.short) {
      assert.ok(!shorts.has(o.short), `duplicate -${o.short}`);
      shorts.add(o.short);
    }
    assert.match(o.help, /^[A-Z].*\.$/, `help of --${o.name} is a sentence`);
  }
  for (
    const pa of [
      "concurrency-range",
      "request-rate-range",
      "request-intervals",
      "periodic-concurrency-range",
      "request-period",
      "measurement-interval",
      "measurement-mode",
      "measurement-request-count",
      "stability-percentage",
      "max-trials",
      "percentile",
      "latency-threshold",
      "binary-search",
      "input-data",
      "shape",
      "string-length",
      "string-data",
      "shared-memory",
      "output-shared-memory-size",
      "sequence-length",
      "sequence-length-variation",
      "sequence-id-range",
      "num-of-sequences",
      "serial-sequences",
      "profile-export-file",
      "collect-metrics",
      "metrics-url",
      "metrics-interval",
      "verbose-csv",
      "ssl-grpc-use-ssl",
      "ssl-https-verify-peer",
      "grpc-compression-algorithm",
      "request-parameter",
      "bls-composing-models",
      "model-signature-name",
      "service-kind",
      "endpoint",
      "max-threads",
      "warmup-request-count",
      "request-count",
      "trace-level",
    ]
  ) assert.ok(names.has(pa), `perf_analyzer option --${pa} is accepted`);
  for (const s of ["m", "x", "u", "i", "b", "p", "s", "r", "l", "a", "f", "H", "v"]) {
    assert.ok(shorts.has(s), `perf_analyzer option -${s} is accepted`);
  }
});
