import assert from "node:assert/strict";
import { csvCell, formatComposingCsv, formatCsv } from "./csv.ts";
import { assertGolden, client, csvExample, level, server } from "./testdata/fixtures.ts";

/** perf_analyzer's documented `cat perf.csv`. */
const SEED_CSV =
  `Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency
1,69.2,225,2148,64,206,11781,19,0,13891,18795,19753,21018
3,84.2,237,1768,21673,209,11742,17,0,35398,43984,47085,51701
4,84.2,279,1604,33669,233,11731,18,1,47045,56545,59225,64886
2,87.2,235,1973,9151,190,11346,17,0,21874,28557,29768,34766
`;

const dropLastColumn = (text: string) => text.replace(/,[^,\n]*$/gm, "");

Deno.test("the documented CSV, rows by throughput, plus the Errors column", async () => {
  const csv = formatCsv(csvExample(), { mode: "concurrency" });
  assert.equal(dropLastColumn(csv), SEED_CSV);
  assert.ok(csv.startsWith(SEED_CSV.split("\n")[0] + ",Errors\n"));
  await assertGolden("perf.csv", csv);
});

Deno.test("--verbose-csv adds latency columns; --percentile adds its own and drops Avg latency", () => {
  const c = client({
    percentilesUs: new Map([[50, 1000], [75, 1050], [90, 1100], [95, 1200], [99, 1300]]),
    avgSendUs: 10.6,
    avgRecvUs: 5.7,
    avgWaitUs: 900.9,
    errorCount: 3,
  });
  const results = [level("concurrency", 1, c, [server()])];
  assert.equal(
    formatCsv(results, { mode: "concurrency", verbose: true }),
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue," +
      "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv," +
      "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response," +
      "response wait,Errors\n" +
      // wait 1000 - 10.6 - 5.7 = 983.7, minus 850 server time: 133
      "1,20,10,133,50,100,600,100,5,1000,1100,1200,1300,1000,15,902,3\n",
  );
  const [header, row] = formatCsv(results, { mode: "concurrency", verbose: true, percentile: 75 })
    .split("\n");
  assert.match(
    header,
    /p50 latency,p75 latency,p90 latency,p95 latency,p99 latency,request\/response,/,
  );
  assert.match(row, /,1000,1050,1100,1200,1300,15,902,3$/);
});

Deno.test("decoupled and cache columns; missing server statistics are zeros", () => {
  const results = [
    level("request_rate", 12.5, client({ throughput: 12.4, responseThroughput: 99.25 })),
    level("request_rate", 25, client({ throughput: 24.9, responseThroughput: 199 }), [
      server({ cacheHitCount: 10, cacheHitUs: 20.5, cacheMissCount: 5, cacheMissUs: 30.2 }),
    ]),
  ];
  assert.equal(
    formatCsv(results, { mode: "request_rate", decoupled: true, cache: true }),
    "Request Rate,Inferences/Second,Response Throughput,Client Send,Network+Server Send/Recv," +
      "Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output," +
      "Server Cache Hit,Server Cache Miss,Client Recv,p50 latency,p90 latency,p95 latency," +
      "p99 latency,Errors\n" +
      "12.5,12.4,99.25,10,985,0,0,0,0,0,0,5,1000,1100,1200,1300,0\n" +
      // 985 wait - (850 + 20.5 + 30.2) = 84.3
      "25,24.9,199,10,84,50,100,600,100,20,30,5,1000,1100,1200,1300,0\n",
  );
});

Deno.test("GPU metric cells with --verbose-csv", () => {
  const metrics = new Map([[1, {
    utilization: new Map([["gpu_uuid_1", 0.5], ["gpu_uuid_0", 0.33]]),
    powerWatts: new Map([["gpu_uuid_0", 55.3], ["gpu_uuid_1", 56.9]]),
    memoryUsedBytes: new Map([["gpu_uuid_0", 10000], ["gpu_uuid_1", 11000]]),
    memoryTotalBytes: new Map([["gpu_uuid_0", 50000], ["gpu_uuid_1", 75000]]),
  }]]);
  const results = [level("concurrency", 1, client()), level("concurrency", 2, client())];
  const [header, one, two] = formatCsv(results, {
    mode: "concurrency",
    verbose: true,
    percentile: 95,
    metrics,
  }).split("\n");
  assert.ok(
    header.endsWith(
      ",Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory,Errors",
    ),
  );
  assert.ok(one.endsWith(
    ",gpu_uuid_0:0.33;gpu_uuid_1:0.5;,gpu_uuid_0:55.3;gpu_uuid_1:56.9;," +
      "gpu_uuid_0:10000;gpu_uuid_1:11000;,gpu_uuid_0:50000;gpu_uuid_1:75000;,0",
  ));
  assert.ok(two.endsWith(",,,,,0"));
  assert.doesNotMatch(formatCsv(results, { mode: "concurrency", metrics }), /GPU/);
});

Deno.test("csvCell quotes only when RFC 4180 needs it", () => {
  assert.equal(csvCell("plain"), "plain");
  assert.equal(csvCell(12), "12");
  assert.equal(csvCell("a,b"), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell("two\nlines"), '"two\nlines"');
});

Deno.test("formatComposingCsv writes one composing model of an ensemble", () => {
  const composing = server({
    model: "pre",
    successCount: 50,
    avgRequestUs: 900.5,
    queueUs: 10.2,
    computeInputUs: 20.1,
    computeInferUs: 700.3,
    computeOutputUs: 30.4,
  });
  const results = [
    level("concurrency", 2, client({ throughput: 40 }), [server({ successCount: 100 }), composing]),
    level("concurrency", 1, client({ throughput: 20 }), [server()]),
  ];
  assert.equal(
    formatComposingCsv(results, { mode: "concurrency", model: "pre", version: "1" }),
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue," +
      "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv\n" +
      // 900.5 - (10.2 + 20.1 + 700.3 + 30.4) = 139.5
      "2,20,0,139,10,20,700,30,0\n",
  );
});

Deno.test("without server statistics (not Triton, or no statistics extension) no server column", () => {
  const results = [level("concurrency", 1, client({ avgSendUs: 10.6, avgRecvUs: 5.7 }))];
  assert.equal(
    formatCsv(results, { mode: "concurrency", serverStats: false, cache: true }),
    "Concurrency,Inferences/Second,Client Send,Client Recv," +
      "p50 latency,p90 latency,p95 latency,p99 latency,Errors\n" +
      "1,20,10,5,1000,1100,1200,1300,0\n",
  );
});
