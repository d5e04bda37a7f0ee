import assert from "node:assert/strict";
import { UsageError } from "../types/errors.ts";
import type { ClientSummary, LevelResult, LlmSummary } from "../types/results.ts";
import {
  checkSlos,
  evaluateSlos,
  formatSlos,
  parseMetricName,
  parseSlos,
  sloObjectives,
  slosMet,
} from "./slo.ts";

function level(client: Partial<ClientSummary> = {}, llm?: Partial<LlmSummary>): LevelResult {
  return {
    mode: "concurrency",
    value: 4,
    client: {
      requestCount: 1000,
      responseCount: 1000,
      errorCount: 0,
      errors: [],
      durationMs: 10_000,
      throughput: 100,
      responseThroughput: 100,
      avgLatencyUs: 20_000,
      stdLatencyUs: 2_000,
      percentilesUs: new Map([[50, 19_000], [90, 24_000], [95, 26_000], [99, 31_000]]),
      avgSendUs: 0,
      avgRecvUs: 0,
      avgWaitUs: 0,
      delayedCount: 0,
      ...client,
    },
    stable: true,
    windows: [],
    ...(llm ? { llm: llm as LlmSummary } : {}),
  };
}

Deno.test("SLOs: metric:statistic op value, comma-separated or repeated, printed back", () => {
  const slos = parseSlos(["request_latency:p99<=30, request_throughput >= 100", "ttft:p90<200"]);
  assert.deepEqual(slos.map((s) => s.text), [
    "request_latency:p99<=30",
    "request_throughput>=100",
    "time_to_first_token:p90<200",
  ]);
  assert.equal(slos[0].perRequest, false);
  // perf_analyzer's, Model Analyzer's and the sweep goals' names.
  assert.deepEqual(
    parseSlos("perf_latency_p95<=5,p99-latency<=6,perf_throughput>10,avg-time-to-first-token<=9")
      .map((s) => s.text),
    ["latency:p95<=5", "latency:p99<=6", "throughput>10", "time_to_first_token:avg<=9"],
  );
  assert.equal(parseSlos("inter_token_latency:mean<=20")[0].text, "inter_token_latency:avg<=20");
  // The summary JSON's keys, unit and all.
  assert.deepEqual(
    parseSlos("time_to_first_token_ms:p90<=200,request_throughput_per_sec>=5").map((s) => s.text),
    ["time_to_first_token:p90<=200", "request_throughput>=5"],
  );
});

Deno.test("SLOs: an unknown metric or statistic is one line listing the valid ones", () => {
  const error = (text: string) => {
    try {
      parseSlos(text);
    } catch (e) {
      assert.ok(e instanceof UsageError);
      return (e as UsageError).errors;
    }
    throw new Error("no error");
  };
  const [unknown] = error("request_lag:p99<=3");
  assert.match(
    unknown,
    /^Invalid value "request_lag:p99<=3" for --slo: unknown metric "request_lag"/,
  );
  assert.match(unknown, /request_latency, latency, time_to_first_token/);
  assert.match(unknown, /perf_latency, ttft/);
  assert.match(
    error("request_latency:p100<=3")[0],
    /unknown statistic "p100" for request_latency: expected avg, std, pN \(N in 1..99\)$/,
  );
  assert.match(error("throughput:p99>=3")[0], /single figure per level and takes no statistic/);
  assert.match(error("request_latency:p99=3")[0], /expected METRIC:STAT<=VALUE/);
  assert.match(error("ttft>=3")[0], /bounds each request and is good when low/);
  assert.equal(error("a<=1, b<=2").length, 2);
  assert.equal(typeof parseMetricName("latency"), "string");
});

Deno.test("SLOs judge a level's figures; a missing figure fails", () => {
  const slos = parseSlos("request_latency:p99<=30,request_throughput>=100,latency:p75<=1");
  const verdicts = evaluateSlos(level(), slos);
  assert.deepEqual(verdicts.map((v) => [v.met, v.text]), [
    [false, "request_latency:p99 31 > 30 msec"],
    [true, "request_throughput 100 >= 100 req/sec"],
    [false, "latency:p75 not measured"],
  ]);
  assert.equal(slosMet(verdicts), false);
  assert.equal(slosMet(evaluateSlos(level(), parseSlos("request_latency:p95<=30"))), true);
  assert.deepEqual(
    evaluateSlos(level({ errorCount: 20 }), parseSlos("error_rate<0.01"))[0].text,
    "error_rate 0.02 >= 0.01",
  );
});

Deno.test("per-request SLOs: the share of good requests, failed ones included, against the attainment", () => {
  const slos = parseSlos("request_latency<=30");
  assert.deepEqual(sloObjectives(slos), [{ metric: "request_latency", value: 30 }]);
  const good = level({ goodCount: 960, errorCount: 0 });
  assert.deepEqual(evaluateSlos(good, slos, { attainment: 0.95 }).map((v) => [v.met, v.text]), [
    [true, "96 % of requests within request_latency<=30 >= 95 %"],
  ]);
  const failing = level({ goodCount: 960, errorCount: 20 });
  assert.equal(evaluateSlos(failing, slos, { attainment: 0.98 })[0].met, false);
  assert.equal(slosMet(evaluateSlos(level(), slos)), false, "not counted: not met");
  // LLM levels count through --goodput's objectives.
  const llm = level({ requestCount: 50 }, {
    requestCount: 50,
    goodput: { objectives: [], goodCount: 45, requestGoodput: 4.5 },
  });
  const ttft = parseSlos("ttft<=200,itl<=20");
  assert.deepEqual(sloObjectives(ttft), [
    { metric: "time_to_first_token", value: 200 },
    { metric: "inter_token_latency", value: 20 },
  ]);
  assert.equal(evaluateSlos(llm, ttft, { attainment: 0.9 })[0].value, 0.9);
  assert.equal(
    formatSlos(ttft, { attainment: 0.9 }),
    "time_to_first_token<=200, inter_token_latency<=20 for 90 % of requests",
  );
});

Deno.test("SLOs on figures the run does not have are one line each", () => {
  const slos = parseSlos("ttft:p90<=200,corrected_request_latency:p99<=5,request_latency:p97<=9");
  assert.deepEqual(checkSlos(slos, { serviceKind: "triton", llm: false, openLoop: false }), [
    "--slo time_to_first_token:p90<=200: --service-kind triton has no value for time_to_first_token (token-streaming LLM runs only (--service-kind openai))",
    "--slo corrected_request_latency:p99<=5: --service-kind triton has no value for corrected_request_latency (open-loop runs only (--request-rate-range, --request-intervals))",
    "--slo request_latency:p97<=9 needs --percentile 97: levels report p50, p90, p95, p99 of request_latency",
  ]);
  assert.deepEqual(
    checkSlos(parseSlos("request_latency:p25<=9,ttft:p75<=1"), {
      serviceKind: "openai",
      llm: true,
      openLoop: true,
    }),
    [],
  );
});
