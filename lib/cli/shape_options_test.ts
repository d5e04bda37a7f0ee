import assert from "node:assert/strict";
import { parseConfigYaml } from "./yaml.ts";
import { buildProfileConfig } from "./config.ts";
import { loadStagesParser, parseStageDuration, parseStages } from "./_shape_options.ts";
import { config, usageErrors } from "./testdata/usage_errors.ts";

Deno.test("ramps: AIPerf's durations with vLLM's strategy, starting at 0 or 1", () => {
  const rate = config(
    "-m",
    "m",
    "--request-rate-range",
    "100",
    "--request-rate-ramp-duration",
    "30",
  );
  assert.deepEqual(rate.ramp, { durationMs: 30_000, strategy: "linear", start: 0 });
  const closed = config(
    ...["-m", "m", "--concurrency-range", "64", "--concurrency-ramp-duration", "10"],
    ...["--ramp-up-strategy", "exponential"],
  );
  assert.equal(closed.loadMode, "concurrency");
  assert.deepEqual(closed.ramp, { durationMs: 10_000, strategy: "exponential", start: 1 });
  // vLLM's --ramp-up-start-rps is the start's other spelling.
  const vllm = config(
    ...["-m", "m", "--request-rate-range", "100", "--request-rate-ramp-duration", "5"],
    ...["--ramp-up-start-rps", "10"],
  );
  assert.equal(vllm.ramp?.start, 10);
  assert.equal(config("-m", "m").ramp, undefined);
});

Deno.test("gamma arrivals: --burstiness implies them, AIPerf's --arrival-smoothness is its other name", () => {
  const c = config("-m", "m", "--request-rate-range", "10", "--burstiness", "0.5");
  assert.equal(c.requestDistribution, "gamma");
  assert.equal(c.burstiness, 0.5);
  const aiperf = config("-m", "m", "--request-rate-range", "10", "--arrival-smoothness", "2");
  assert.deepEqual([aiperf.requestDistribution, aiperf.burstiness], ["gamma", 2]);
  const poisson = config(
    "-m",
    "m",
    "--request-rate-range",
    "10",
    "--request-distribution",
    "gamma",
  );
  assert.equal(poisson.burstiness, 1);
});

Deno.test("stages: inline, from a file, or as a list in the --config YAML", async () => {
  assert.deepEqual(parseStages("30s:100, 1m30s:100,500ms:0", "--x"), [
    { durationMs: 30_000, target: 100 },
    { durationMs: 90_000, target: 100 },
    { durationMs: 500, target: 0 },
  ]);
  assert.equal(parseStageDuration(2.5), 2500);
  assert.equal(parseStageDuration("2h"), 7_200_000);
  assert.equal(parseStageDuration("1x"), undefined);
  const dir = await Deno.makeTempDir();
  try {
    // main.ts's withConfigFile loads it for a command line with stages.
    await loadStagesParser();
    await Deno.writeTextFile(
      `${dir}/stages.yaml`,
      "- {duration: 10s, target: 5}\n- {duration: 20, target: 1}\n",
    );
    const c = config("-m", "m", "--concurrency-stages", `${dir}/stages.yaml`);
    assert.equal(c.loadMode, "concurrency");
    assert.deepEqual(c.stages, [{ durationMs: 10_000, target: 5 }, {
      durationMs: 20_000,
      target: 1,
    }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const yaml = parseConfigYaml(
    "model_name: m\nrequest-rate-stages:\n  - duration: 1m\n    target: 50\n  - {duration: 30s, target: 0}\n",
    { file: "c.yaml", command: "profile" },
  );
  const fromYaml = buildProfileConfig(yaml);
  assert.equal(fromYaml.loadMode, "request_rate");
  assert.deepEqual(fromYaml.stages, [
    { durationMs: 60_000, target: 50 },
    { durationMs: 30_000, target: 0 },
  ]);
});

Deno.test("shapes refuse what they can not go with, one line each, before any load", () => {
  const errors = (...argv: string[]) => usageErrors(() => config("-m", "m", ...argv));
  assert.deepEqual(errors("--request-rate-ramp-duration", "5"), [
    "Option --request-rate-ramp-duration needs --request-rate-range",
  ]);
  assert.deepEqual(errors("--request-rate-range", "5", "--concurrency-ramp-duration", "5"), [
    "Option --concurrency-ramp-duration with --request-rate-range ramps the cap on requests in flight: it needs that cap, --concurrency-range C",
  ]);
  // AIPerf's --request-rate R --concurrency C: the cap ramps, beside the rate or alone.
  const capped = config(
    ...["-m", "m", "--request-rate-range", "100", "--concurrency-range", "8"],
    ...["--concurrency-ramp-duration", "2", "--request-rate-ramp-duration", "4"],
  );
  assert.equal(capped.capRampMs, 2000);
  assert.deepEqual(capped.ramp, { durationMs: 4000, strategy: "linear", start: 0 });
  const capOnly = config(
    ...["-m", "m", "--request-rate-range", "100", "--concurrency-range", "8"],
    ...["--concurrency-ramp-duration", "2"],
  );
  assert.deepEqual([capOnly.capRampMs, capOnly.ramp], [2000, undefined]);
  assert.deepEqual(errors("--ramp-up-strategy", "exponential"), [
    "Option --ramp-up-strategy needs --request-rate-ramp-duration or --concurrency-ramp-duration",
  ]);
  assert.deepEqual(
    errors(
      ...["--request-rate-range", "5", "--request-rate-ramp-duration", "5"],
      ...["--ramp-up-strategy", "exponential", "--ramp-up-start", "0"],
    ),
    ["An exponential ramp needs --ramp-up-start above 0: it grows by a factor"],
  );
  assert.deepEqual(
    errors("--request-rate-range", "5", "--burstiness", "2", "--request-distribution", "poisson"),
    [
      "Option --burstiness shapes gamma gaps: not with --request-distribution poisson",
    ],
  );
  assert.deepEqual(errors("--concurrency-range", "4", "--burstiness", "0.5"), [
    "Option --burstiness shapes the gaps of an open loop: it needs --request-rate-range or --request-rate-stages",
  ]);
  assert.deepEqual(errors("--request-rate-stages", "10s:5", "--concurrency-range", "2"), [
    "Options --concurrency-range, --request-rate-stages can not be used together: each chooses a load mode",
  ]);
  assert.deepEqual(errors("--concurrency-stages", "10s:5", "--benchmark-duration", "3"), [
    "Option --concurrency-stages can not be used with --benchmark-duration: the stages set the one window",
  ]);
  assert.deepEqual(errors("--concurrency-stages", "10s:2.5"), [
    "--concurrency-stages: each target is a whole number of requests in flight",
  ]);
  assert.match(
    errors("--request-rate-stages", "no_such_file.yaml")[0],
    /neither DURATION:TARGET,\.\.\. nor a readable file/,
  );
  assert.deepEqual(errors("--request-rate-stages", "10s:x"), [
    "--request-rate-stages, stage 1: expected a duration (seconds, or as 30s, 1m30s, 500ms) and a target >= 0",
  ]);
  assert.deepEqual(
    errors("--concurrency-range", "4", "--concurrency-ramp-duration", "2", "--workers", "2"),
    [
      "Option --concurrency-ramp-duration can not be used with --workers 2: one thread drives the shape",
    ],
  );
  assert.deepEqual(errors("--prefill-concurrency", "2"), [
    "Option --prefill-concurrency needs --service-kind openai --streaming: it waits for first tokens",
  ]);
  assert.deepEqual(errors("--prefill-concurrency-ramp-duration", "5"), [
    "Option --prefill-concurrency-ramp-duration needs --prefill-concurrency: it ramps that limit",
  ]);
  assert.deepEqual(errors("--warmup-grace-period", "5"), [
    "Option --warmup-grace-period needs --warmup-duration",
  ]);
  const warm = config("-m", "m", "--warmup-duration", "10", "--warmup-grace-period", "2.5");
  assert.deepEqual([warm.warmupDurationMs, warm.warmupGraceMs], [10_000, 2500]);
  assert.deepEqual(errors("--warmup-duration", "0"), [
    'Invalid value "0" for --warmup-duration: expected a number of seconds > 0',
  ]);
});
