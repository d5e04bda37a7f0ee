import assert from "node:assert/strict";
import { buildProfileConfig } from "../cli/config.ts";
import { parseArgv } from "../cli/args.ts";
import { readConfigFile } from "../cli/yaml.ts";
import { usageErrors } from "../cli/testdata/usage_errors.ts";
import {
  buildReportConfig,
  buildSweepConfig,
  countPoints,
  pointConfig,
  pointKey,
  seriesLoads,
  type SweepConfig,
} from "./config.ts";

const PLACEHOLDERS = new URL("../../fixtures/sweep/placeholders.yaml", import.meta.url).pathname;
const EXAMPLE = new URL("../../fixtures/sweep/sweep.yaml", import.meta.url).pathname;

function sweep(...argv: string[]): SweepConfig {
  return buildSweepConfig(parseArgv(argv).options);
}

function points(config: SweepConfig): string[] {
  return config.series.flatMap((s) =>
    [...seriesLoads(s)].map((v) => {
      const p = { ...s.point, value: v };
      return `${p.model} b${p.batchSize} ${p.protocol} ${p.inputData} c${p.value}`;
    })
  );
}

Deno.test("the placeholder fixture expands to models x data sets x batch sizes x loads", async () => {
  const config = buildSweepConfig(await readConfigFile(PLACEHOLDERS, { command: "profile" }));
  assert.equal(countPoints(config), 2 * 2 * 2 * 3);
  assert.deepEqual(points(config).slice(0, 7), [
    "simple b1 http random c1",
    "simple b1 http random c3",
    "simple b1 http random c5",
    "simple b2 http random c1",
    "simple b2 http random c3",
    "simple b2 http random c5",
    "simple b1 http zero c1",
  ]);
  assert.equal(config.checkpointDirectory, "/tmp/inferperf-placeholders");
  assert.equal(config.csvFile, "/tmp/inferperf-placeholders/results.csv");
  assert.equal(config.htmlFile, "/tmp/inferperf-placeholders/report.html");
  assert.equal(config.goals.objective.name, "p95-latency");
  assert.deepEqual(
    config.goals.constraints.map((c) => [c.bound, c.metric.name, c.limit]),
    [["max", "p99-latency", 20], ["min", "throughput", 10]],
  );
  const series = config.series[3]!;
  const point = pointConfig(series, 5);
  assert.deepEqual(point.concurrency, { start: 5, end: 1, step: 1 });
  assert.equal(point.batchSize, 2);
  assert.equal(point.model, "simple");
  assert.equal(point.async, true);
  assert.equal(point.measurementIntervalMs, 200);
  assert.deepEqual(point.headers, { "X-Sweep": "placeholders" });
  assert.equal(config.settings["measurement-interval"], 200);
  assert.deepEqual(config.settings.header, ["X-Sweep: placeholders"]);
});

Deno.test("command-line sweep values: lists and ranges; each point is a normal ProfilePlan", () => {
  const config = sweep(
    "--profile-models",
    "a",
    "--profile-models",
    "b,c",
    "-b",
    "1,4",
    "--concurrency-range",
    "2:6:2",
    "-u",
    "h:1",
  );
  assert.equal(countPoints(config), 3 * 2 * 3);
  assert.deepEqual(points(config).slice(0, 4), [
    "a b1 http random c2",
    "a b1 http random c4",
    "a b1 http random c6",
    "a b4 http random c2",
  ]);
  const expected = buildProfileConfig(
    parseArgv(["-m", "c", "-b", "4", "--concurrency-range", "6", "-u", "h:1"]).options,
  );
  assert.deepEqual(pointConfig(config.series.at(-1)!, 6), expected);
  assert.equal(config.checkpointDirectory, "checkpoints");
});

Deno.test("an open-ended load range needs -l and is not counted", () => {
  const config = sweep("--profile-models", "a", "--concurrency-range", "2:0:2", "-l", "30");
  assert.equal(countPoints(config), undefined);
  const loads = seriesLoads(config.series[0]!)[Symbol.iterator]();
  assert.deepEqual([loads.next().value, loads.next().value, loads.next().value], [2, 4, 6]);
  assert.equal(config.latencyThresholdMs, 30);
  assert.equal(pointConfig(config.series[0]!, 4).latencyThresholdMs, 0);
});

Deno.test("sweep errors are all reported, once each", () => {
  assert.deepEqual(
    usageErrors(() =>
      sweep(
        "--profile-models",
        "a,b",
        "-m",
        "x",
        "--binary-search",
        "-b",
        "0,2",
        "--concurrency-range",
        "1:0",
        "--objective",
        "speed",
        "--constraints",
        "max-p75-latency=3,max-p99-latency=-1",
      )
    ),
    [
      "Options --profile-models and -m/--model-name can not be used together",
      "Option --binary-search does not apply to sweeps",
      'Invalid value "0,2" for -b/--batch-size: expected a comma-delimited list of integers > 0',
      "The end of the --concurrency-range and -l/--latency-threshold can not both be 0: the sweep would never stop",
      `Invalid value "speed" for --objective: expected throughput, avg-latency or pN-latency (N from 1 to 99), Model Analyzer's perf_throughput, perf_latency_avg, perf_latency_pN or cpu_used_ram, or for LLM runs request-goodput, output-token-throughput or avg- or pN-time-to-first-token, -time-to-second-token, -inter-token-latency, -request-latency (also AIPerf's names with the statistic after: time_to_first_token_p90, output_token_throughput_per_user_avg)`,
      `Invalid constraint "max-p99-latency=-1" for --constraints: expected min-METRIC=N or max-METRIC=N with METRIC throughput, avg-latency or pN-latency (N from 1 to 99), Model Analyzer's perf_throughput, perf_latency_avg, perf_latency_pN or cpu_used_ram, or for LLM runs request-goodput, output-token-throughput or avg- or pN-time-to-first-token, -time-to-second-token, -inter-token-latency, -request-latency (also AIPerf's names with the statistic after: time_to_first_token_p90, output_token_throughput_per_user_avg) and N >= 0`,
      'Metric "p75-latency" needs --percentile 75: points report p50, p90, p95, p99 latency',
    ],
  );
  assert.deepEqual(
    usageErrors(() => sweep("--profile-models", "a,b", "--concurrency-range", "1:0", "-p", "0")),
    [
      'Invalid value "0" for -p/--measurement-interval: expected an integer > 0',
      "The end of the --concurrency-range and -l/--latency-threshold can not both be 0: the sweep would never stop",
    ],
  );
  assert.deepEqual(
    usageErrors(() => sweep("--profile-models", "a", "--objective", "p75-latency")),
    ['Metric "p75-latency" needs --percentile 75: points report p50, p90, p95, p99 latency'],
  );
  assert.deepEqual(
    usageErrors(() => sweep("--profile-models", ",")),
    ["Option --profile-models needs at least one model"],
  );
});

Deno.test("sweep options outside a sweep are errors; report reads its own options", () => {
  assert.deepEqual(
    usageErrors(() =>
      buildProfileConfig(parseArgv(["-m", "a", "--objective", "throughput"]).options)
    ),
    ["Option --objective applies to sweeps (--profile-models) only"],
  );
  const parsed = parseArgv(["report", "--checkpoint-directory", "d/", "--constraints", "a=1"]);
  assert.equal(parsed.command, "report");
  assert.deepEqual(buildReportConfig(parsed.options), {
    checkpointDirectory: "d/",
    csvFile: "d/results.csv",
    htmlFile: "d/report.html",
    constraints: ["a=1"],
  });
  assert.deepEqual(
    buildReportConfig(parseArgv(["report", "-f", "r.csv", "--report-html", "r.html"]).options),
    { checkpointDirectory: "checkpoints", csvFile: "r.csv", htmlFile: "r.html" },
  );
  assert.throws(() => parseArgv(["report", "-m", "x"]), /does not apply to "inferperf report"/);
});

Deno.test("the README example sweep is valid; point keys are stable", async () => {
  const config = buildSweepConfig(await readConfigFile(EXAMPLE, { command: "profile" }));
  assert.deepEqual(points(config), [
    "slow b1 http random c1",
    "slow b1 http random c2",
    "batched b1 http random c1",
    "batched b1 http random c2",
  ]);
  assert.equal(
    pointKey(config.series[0]!.point),
    '["slow",1,"http","random","concurrency",1]',
  );
});
