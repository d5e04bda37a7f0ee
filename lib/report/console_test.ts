import assert from "node:assert/strict";
import {
  formatLevel,
  formatPass,
  formatSettings,
  formatSummaryTable,
  formatTraceSettings,
  type Settings,
} from "./console.ts";
import {
  assertGolden,
  client,
  concurrencyExample,
  level,
  percentile95Example,
  server,
  trimLineEnds,
} from "./testdata/fixtures.ts";

const settings = (overrides: Partial<Settings> = {}): Settings => ({
  batchSize: 1,
  serviceKind: "triton",
  mode: "concurrency",
  range: { start: 1, end: 1 },
  latencyThresholdMs: 0,
  measurementMode: "time_windows",
  measurementIntervalMs: 5000,
  measurementRequestCount: 50,
  async: false,
  ...overrides,
});

/** From perf_analyzer's documentation ("Understanding the output"), as printed there. */
const SEED_PERCENTILE_95 = `Request concurrency: 1
  Client:
    Request count: 348
    Throughput: 69.6 infer/sec
    p50 latency: 13936 usec
    p90 latency: 18682 usec
    p95 latency: 19673 usec
    p99 latency: 21859 usec
    Avg HTTP time: 14017 usec (send/recv 200 usec + response wait 13817 usec)
  Server:
    Inference count: 428
    Execution count: 428
    Successful request count: 428
    Avg request latency: 12005 usec (overhead 36 usec + queue 42 usec + compute input 164 usec + compute infer 11748 usec + compute output 15 usec)

Inferences/Second vs. Client p95 Batch Latency
Concurrency: 1, throughput: 69.6 infer/sec, latency 19673 usec
`;

const SEED_CONCURRENCY_4 = `Request concurrency: 4
  Client:
    Request count: 415
    Throughput: 83 infer/sec
    Avg latency: 48064 usec (standard deviation 6412 usec)
    p50 latency: 47975 usec
    p90 latency: 56670 usec
    p95 latency: 59118 usec
    p99 latency: 63609 usec
    Avg HTTP time: 48166 usec (send/recv 264 usec + response wait 47902 usec)
  Server:
    Inference count: 498
    Execution count: 498
    Successful request count: 498
    Avg request latency: 45602 usec (overhead 39 usec + queue 33577 usec + compute input 217 usec + compute infer 11753 usec + compute output 16 usec)

Inferences/Second vs. Client Average Batch Latency
Concurrency: 1, throughput: 67.8 infer/sec, latency 14710 usec
Concurrency: 2, throughput: 89.8 infer/sec, latency 22280 usec
Concurrency: 3, throughput: 80.4 infer/sec, latency 37283 usec
Concurrency: 4, throughput: 83 infer/sec, latency 48064 usec
`;

Deno.test("the --percentile=95 example, from raw windows to the report", async () => {
  const result = percentile95Example();
  const options = { protocol: "http" as const, percentile: 95 };
  const report = formatLevel(result, options) + formatSummaryTable([result], options);
  assert.equal(trimLineEnds(report), SEED_PERCENTILE_95);
  await assertGolden(
    "percentile95.txt",
    formatSettings(settings({ percentile: 95 })) + report,
  );
});

Deno.test("the --concurrency-range 1:4 example", async () => {
  const results = concurrencyExample();
  const options = { protocol: "http" as const };
  const blocks = results.map((r) => formatLevel(r, options));
  const table = formatSummaryTable(results);
  assert.equal(trimLineEnds(blocks[3] + table), SEED_CONCURRENCY_4);
  const header = formatSettings(settings({ range: { start: 1, end: 4 } }));
  await assertGolden("concurrency_1_4.txt", header + blocks.join("") + table);
});

Deno.test("formatSettings follows perf_analyzer's lines for each setup", () => {
  assert.equal(
    formatSettings(settings()),
    `*** Measurement Settings ***
  Batch size: 1
  Service Kind: TRITON
  Using "time_windows" mode for stabilization
  Stabilizing using average latency and throughput
  Measurement window: 5000 msec
  Using synchronous calls for inference

`,
  );
  assert.equal(
    formatSettings(settings({
      serviceKind: "tfserving",
      mode: "request_rate",
      range: { start: 10, end: 40.5 },
      latencyThresholdMs: 300,
      measurementMode: "count_windows",
      percentile: 99,
      async: true,
      decoupled: true,
      requestDistribution: "poisson",
      binarySearch: true,
      warmupRequestCount: 1,
    })),
    `*** Measurement Settings ***
  Service Kind: TENSORFLOW_SERVING
  Sending 1 warmup request
  Using "count_windows" mode for stabilization
  Stabilizing using p99 throughput
  Minimum number of samples in each window: 50
  Latency limit: 300 msec
  Request Rate limit: 40.5 requests per seconds
  Using poisson distribution on request generation
  Using Binary Search algorithm
  Using asynchronous calls for inference
  Detected decoupled model, using the first response for measuring latency

`,
  );
  assert.equal(
    formatSettings(settings({
      serviceKind: "torchserve",
      batchSizeGiven: true,
      batchSize: 4,
      range: { start: 2, end: 0 },
      requestCount: 200,
      warmupRequestCount: 10,
    })),
    `*** Measurement Settings ***
  Batch size: 4
  Service Kind: TORCHSERVE
  Sending 10 warmup requests
  Sending 200 benchmark requests
  Latency limit: 0 msec
  Using synchronous calls for inference

`,
  );
  assert.match(
    formatSettings(settings({ mode: "request_rate", range: { start: 20, end: 20 } })),
    /Request Rate limit: 20 requests per seconds\n {2}Using uniform distribution/,
  );
  assert.doesNotMatch(formatSettings(settings({ mode: "custom_intervals" })), /limit|distribution/);
});

Deno.test("formatLevel: gRPC, verbose and request-rate variants", () => {
  const result = level("request_rate", 20, client({ throughput: 19.9 }));
  assert.equal(
    formatLevel(result, { protocol: "grpc" }),
    `Request Rate: 20 inference requests per seconds
  Client: 
    Request count: 100
    Throughput: 19.9 infer/sec
    Avg latency: 1000 usec (standard deviation 100 usec)
    p50 latency: 1000 usec
    p90 latency: 1100 usec
    p95 latency: 1200 usec
    p99 latency: 1300 usec
    Avg gRPC time: 915 usec ((un)marshal request/response 15 usec + response wait 900 usec)
`,
  );
  assert.match(
    formatLevel(result, { protocol: "grpc", verbose: true }),
    /Avg gRPC time: 915 usec \(marshal 10 usec \+ response wait 900 usec \+ unmarshal 5 usec\)\n/,
  );
  assert.match(
    formatLevel(result, { protocol: "http", verbose: true }),
    /Avg HTTP time: 915 usec \(send 10 usec \+ response wait 900 usec \+ receive 5 usec\)\n/,
  );
  assert.equal(
    formatSummaryTable([result]).split("\n")[1],
    "Request Rate: 20, throughput: 19.9 infer/sec, latency 1000 usec",
  );
  const custom = formatLevel(level("custom_intervals", 3.5, client()), { protocol: "http" });
  assert.ok(custom.startsWith("  Client: \n"));
  const periodic = formatLevel(level("concurrency", 100, client()), {
    protocol: "grpc",
    periodic: { range: { start: 10, end: 100, step: 30 }, requestPeriod: 10 },
  });
  assert.ok(
    periodic.startsWith("Periodic concurrency: 10:100:30, request period 10\n  Client: \n"),
  );
});

Deno.test("formatLevel: an extra percentile joins the percentile lines in order", () => {
  const c = client({
    percentilesUs: new Map([[50, 1000], [90, 1100], [95, 1200], [99, 1300], [75, 1050]]),
  });
  const text = formatLevel(level("concurrency", 2, c), { protocol: "http", percentile: 75 });
  assert.match(text, /p50 latency: 1000 usec\n {4}p75 latency: 1050 usec\n {4}p90 latency/);
  assert.doesNotMatch(text, /Avg latency/);
  assert.equal(
    formatSummaryTable([level("concurrency", 2, c)], { percentile: 75 }),
    "Inferences/Second vs. Client p75 Batch Latency\n" +
      "Concurrency: 2, throughput: 20 infer/sec, latency 1050 usec\n",
  );
});

Deno.test("formatLevel: decoupled models show response throughput and no library times", () => {
  const text = formatLevel(
    level("concurrency", 6, client({ throughput: 33.5238, responseThroughput: 38.7177 })),
    { protocol: "grpc", decoupled: true },
  );
  assert.match(
    text,
    /Throughput: 33.5238 infer\/sec\n {4}Response Throughput: 38.7177 infer\/sec\n/,
  );
  assert.ok(text.endsWith("p99 latency: 1300 usec\n    \n"));
});

Deno.test("formatLevel: failed requests and late sends", () => {
  const errors: Array<[string, number]> = [
    ["HTTP 500: model crashed", 9],
    ["connection reset\nby peer", 4],
    ["e3", 3],
    ["e4", 2],
    ["e5", 1],
    ["e6", 1],
  ];
  const c = client({ errorCount: 20, errors, delayedCount: 2 });
  const text = formatLevel(level("request_rate", 100, c), { protocol: "http" });
  const lines = text.split("\n");
  assert.equal(
    lines[3],
    "    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. " +
      "2.00% of the requests were delayed. ",
  );
  const failed = lines.indexOf("    Failed requests: 20");
  assert.equal(lines[failed - 1].startsWith("    Avg HTTP time"), true);
  assert.deepEqual(lines.slice(failed + 1, failed + 8), [
    "      9 x HTTP 500: model crashed",
    "      4 x connection reset by peer",
    "      3 x e3",
    "      2 x e4",
    "      1 x e5",
    "      by cause: other 20",
    "",
  ]);
  assert.doesNotMatch(
    formatLevel(level("request_rate", 100, client({ delayedCount: 1 })), {
      protocol: "http",
    }),
    /WARNING/,
  );
});

Deno.test("formatLevel: server without successful requests and with the response cache", () => {
  const idle = formatLevel(
    level("concurrency", 1, client(), [server({ successCount: 0 })]),
    { protocol: "http" },
  );
  assert.ok(idle.endsWith("  Server: \n    Request count: 0\n"));
  const cached = server({
    successCount: 100,
    avgRequestUs: 500.5,
    overheadUs: 0,
    queueUs: 20.2,
    computeInputUs: 10.5,
    computeInferUs: 700.2,
    computeOutputUs: 10.1,
    cacheHitCount: 60,
    cacheHitUs: 30.4,
    cacheMissCount: 40,
    cacheMissUs: 40.7,
  });
  const text = formatLevel(level("concurrency", 1, client(), [cached]), { protocol: "http" });
  // cache hit/miss: (720.8 x 40 computed + 30.4 x 60 hits + 40.7 x 40 misses) / 100 = 322.84
  assert.ok(text.endsWith(`  Server: 
    Inference count: 100
    Execution count: 100
    Cache hit count: 60
    Cache miss count: 40
    Successful request count: 100
    Avg request latency: 500 usec (overhead 0 usec + queue 20 usec + cache hit/miss 322 usec)
      Average Cache Hit Latency: 30 usec
      Average Cache Miss Latency: 760 usec (cache lookup/insertion 40 usec + compute input 10 usec + compute infer 700 usec + compute output 10 usec)

`));
});

Deno.test("formatLevel: ensembles list their composing models", async () => {
  const ensemble = server({
    model: "ensemble",
    avgRequestUs: 353265.9,
    overheadUs: 866,
    inferenceCount: 204,
    executionCount: 204,
    successCount: 204,
    queueUs: 0,
    computeInputUs: 0,
    computeInferUs: 0,
    computeOutputUs: 0,
  });
  const composing = [
    server({
      model: "fasttext-language-identification",
      inferenceCount: 204,
      executionCount: 204,
      successCount: 204,
      avgRequestUs: 453.2,
      overheadUs: 30,
      queueUs: 41.5,
      computeInputUs: 12.2,
      computeInferUs: 360.3,
      computeOutputUs: 9.9,
    }),
    server({
      model: "seamless-m4t-v2-large",
      inferenceCount: 204,
      executionCount: 102,
      successCount: 204,
      avgRequestUs: 352011.4,
      overheadUs: 34,
      queueUs: 42.2,
      computeInputUs: 101.1,
      computeInferUs: 351800.2,
      computeOutputUs: 33.4,
    }),
  ];
  const result = level("concurrency", 1, client(), [ensemble, ...composing]);
  await assertGolden("ensemble.txt", formatLevel(result, { protocol: "http" }));
  const cached = formatLevel(result, { protocol: "http", cache: true });
  assert.match(
    cached,
    /Avg request latency: 353265 usec \(overhead 866 usec \+ queue 83 usec \+ cache hit\/miss 352316 usec\)\n {6}Average Cache Hit Latency: 0 usec\n {6}Average Cache Miss Latency: 352316 usec \n\n {2}Composing models: \n/,
  );
});

Deno.test("formatLevel: GPU metrics", () => {
  const metrics = {
    utilization: new Map([["GPU-b", 0.5], ["GPU-a", 0.333]]),
    powerWatts: new Map([["GPU-a", 55.3], ["GPU-b", 56.9]]),
    memoryUsedBytes: new Map([["GPU-a", 10000], ["GPU-b", 11000]]),
    memoryTotalBytes: new Map([["GPU-a", 50000], ["GPU-b", 75000]]),
  };
  const text = formatLevel(level("concurrency", 1, client()), { protocol: "http", metrics });
  assert.ok(text.endsWith(`  Server Prometheus Metrics: 
    Avg GPU Utilization:
      GPU-a : 33.3%
      GPU-b : 50%
    Avg GPU Power Usage:
      GPU-a : 55.3 watts
      GPU-b : 56.9 watts
    Max GPU Memory Usage:
      GPU-a : 10000 bytes
      GPU-b : 11000 bytes
    Total GPU Memory:
      GPU-a : 50000 bytes
      GPU-b : 75000 bytes
`));
  const many = new Map(Array.from({ length: 17 }, (_, i) => [`GPU-${i}`, 1]));
  const crowded = formatLevel(level("concurrency", 1, client()), {
    protocol: "http",
    metrics: { ...metrics, utilization: many },
  });
  assert.match(crowded, /Too many GPUs on system/);
});

Deno.test("formatSummaryTable is empty without results; formatPass shows one window", () => {
  assert.equal(formatSummaryTable([]), "");
  const c = client({ throughput: 92.8314, avgLatencyUs: 44717.2, stdLatencyUs: 812.9 });
  assert.equal(
    formatPass(1, c),
    "  Pass [1] throughput: 92.8314 infer/sec. Avg latency: 44717 usec (std 812 usec). \n",
  );
  assert.equal(
    formatPass(2, c, { percentile: 95 }),
    "  Pass [2] throughput: 92.8314 infer/sec. p95 latency: 1200 usec\n",
  );
});

Deno.test("trace settings: one line, perf_analyzer's four settings first, the server's others after", () => {
  assert.equal(
    formatTraceSettings({
      trace_mode: ["triton"],
      trace_file: [""],
      log_frequency: ["0"],
      trace_count: ["-1"],
      trace_rate: ["1000"],
      trace_level: ["TIMESTAMPS", "TENSORS"],
    }),
    "Trace settings: trace_level=TIMESTAMPS,TENSORS trace_rate=1000 trace_count=-1 " +
      'log_frequency=0 trace_file="" trace_mode=triton\n',
  );
});

Deno.test("formatSettings: load shapes, gamma arrivals, a warmup of a duration, one timed window", () => {
  assert.equal(
    formatSettings(settings({
      mode: "request_rate",
      requestDistribution: "gamma",
      burstiness: 0.5,
      ramp: { durationMs: 30_000, strategy: "exponential", start: 1 },
      warmupDurationMs: 2000,
      benchmarkDurationMs: 60_000,
    })),
    `*** Measurement Settings ***
  Batch size: 1
  Service Kind: TRITON
  Warming up each level for 2 s
  Measuring one window of 60 s of sends, without stabilization
  Using gamma (burstiness 0.5) distribution on request generation
  Ramping the request rate exponentially from 1 to each level over 30 s
  Using synchronous calls for inference

`,
  );
  assert.match(
    formatSettings(settings({
      stages: [{ durationMs: 1000, target: 4 }, { durationMs: 500, target: 1 }],
    })),
    /Measuring one window of 1\.5 s of sends, without stabilization\n {2}Stages of the concurrency: to 4 over 1 s, then to 1 over 0\.5 s\n/,
  );
});
