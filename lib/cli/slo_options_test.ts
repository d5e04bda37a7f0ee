import assert from "node:assert/strict";
import { config, usageErrors } from "./testdata/usage_errors.ts";

Deno.test("--slo, --threshold and --search-recipe make the plan; no range brackets from 1", () => {
  const c = config(
    ...["-m", "simple", "--slo", "request_latency:p99<=30", "--slo", "throughput>=10"],
    ...["--search-recipe", "max-concurrency-under-sla", "--threshold", "error_rate<0.01"],
  );
  assert.deepEqual(c.slos.map((s) => s.text), ["request_latency:p99<=30", "throughput>=10"]);
  assert.deepEqual(c.thresholds.map((s) => s.text), ["error_rate<0.01"]);
  assert.equal(c.sloAttainment, 1);
  assert.deepEqual(c.capacity, {
    recipe: "max-concurrency-under-sla",
    resolution: 1,
    checkpoint: "capacity.ckpt",
  });
  assert.deepEqual(c.concurrency, { start: 1, end: 0, step: 1 });
  const rate = config(
    ...["-m", "simple", "--slo", "request_latency:p99<=30", "--search-recipe"],
    ...["max-rate-under-sla", "--search-resolution", "10"],
  );
  assert.equal(rate.loadMode, "request_rate");
  assert.deepEqual(rate.requestRate, { start: 1, end: 0, step: 1 });
  assert.equal(rate.capacity?.resolution, 0.1);
});

Deno.test("per-request SLOs become the goodput objectives the levels count by", () => {
  const c = config(
    ...["-m", "simple", "--slo", "request_latency<=25", "--slo-attainment", "0.9"],
    ...["--search-recipe", "max-goodput-under-slo", "--concurrency-range", "2:16"],
  );
  assert.deepEqual(c.goodput, [{ metric: "request_latency", value: 25 }]);
  assert.equal(c.sloAttainment, 0.9);
  assert.deepEqual(c.concurrency, { start: 2, end: 16, step: 1 });
});

Deno.test("contradictory SLO options are one line each", () => {
  assert.deepEqual(
    usageErrors(() => config("-m", "simple", "--search-recipe", "max-concurrency-under-sla")),
    [
      "Option --search-recipe max-concurrency-under-sla needs --slo: the objectives its answer meets",
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...["-m", "simple", "--search-recipe", "max-rate-under-sla", "--slo", "latency:p99<=5"],
        ...["--binary-search", "--concurrency-range", "1:8", "-l", "5"],
      )
    ),
    [
      "Option --search-recipe max-rate-under-sla can not be used with --binary-search: each chooses the levels",
      "Option --search-recipe max-rate-under-sla can not be used with -l/--latency-threshold: give the bound as --slo latency:p99<=N",
      "Option --search-recipe max-rate-under-sla searches request rates: give --request-rate-range, not --concurrency-range",
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...["-m", "simple", "--slo-attainment", "0.9", "--abort-on-fail"],
        ...["--failed-request-threshold", "0", "--threshold", "itl:p99<=3"],
      )
    ),
    [
      "--threshold inter_token_latency:p99<=3: --service-kind triton has no value for inter_token_latency (token-streaming LLM runs only (--service-kind openai))",
      "Option --slo-attainment needs a per-request SLO: a metric without statistic, such as --slo request_latency<=30",
      'Invalid value "0" for --failed-request-threshold: expected a count >= 1 or a percentage above 0 and up to 100 (5%)',
    ],
  );
});

Deno.test("a search or a gate is refused with repeat runs and MPI", () => {
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...["-m", "simple", "--search-recipe", "max-concurrency-under-sla", "--slo"],
        ...["latency:p99<=5", "--num-profile-runs", "3", "--threshold", "throughput>=1"],
      )
    ),
    [
      "Options --threshold judge one run's levels: they can not be used with --num-profile-runs",
      "Option --search-recipe max-concurrency-under-sla can not be used with --num-profile-runs: the search measures its boundary again itself",
    ],
  );
});
