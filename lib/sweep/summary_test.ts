import assert from "node:assert/strict";
import { parseGoals } from "./goals.ts";
import {
  formatPointResult,
  formatPointStart,
  formatSweepCsv,
  formatSweepSummary,
} from "./summary.ts";
import { point, record } from "./testdata/records.ts";

const records = [
  record({ model: "slow", value: 1 }, { throughput: 99.5, p99Ms: 12 }),
  record({ model: "slow", value: 2 }, { throughput: 100.25, p99Ms: 24 }),
  record({ model: "batched", batchSize: 4, value: 1 }, { throughput: 400, p99Ms: 9 }),
];

Deno.test("the summary names the best point per model and tabulates every point", () => {
  const text = formatSweepSummary(records, {
    goals: parseGoals("throughput", ["max-p99-latency=20"]),
    failures: [{ point: point({ model: "nope" }), message: "Model not found" }],
  });
  assert.equal(
    text,
    `Best point per model (highest throughput; constraints: max-p99-latency=20):
  slow, batch size 1, http, input data random, concurrency 1: throughput 99.5 infer/sec
  batched, batch size 4, http, input data random, concurrency 1: throughput 400 infer/sec
  nope: none; no point is stable, free of failed requests and within the constraints

Measured points: 3 (latencies in usec)
Model    Batch  Protocol  Input data  Concurrency  Infer/sec  Avg latency  p50 latency  p90 latency  p95 latency  p99 latency  Status
slow         1  http      random                1       99.5         9600         8400        10800        11400        12000  best
slow         1  http      random                2     100.25        19200        16800        21600        22800        24000  p99 latency 24 > 20 msec
batched      4  http      random                1        400         7200         6300         8100         8550         9000  best

Failed points (not saved; measured again on the next run):
  nope, batch size 1, http, input data random, concurrency 1: Model not found
`,
  );
});

Deno.test("the CSV has a row per point with the verdict", () => {
  const csv = formatSweepCsv(records, { goals: parseGoals("throughput", ["max-p99-latency=20"]) });
  const [header, ...rows] = csv.trim().split("\n");
  assert.equal(
    header,
    "Model,Batch Size,Protocol,Input Data,Concurrency,Inferences/Second,Avg latency,p50 latency,p90 latency,p95 latency,p99 latency,Client Send,Client Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Errors,Stable,Best,Notes,Measured At",
  );
  assert.equal(
    rows[1],
    "slow,1,http,random,2,100.25,19200,16800,21600,22800,24000,10,5,50,100,600,100,0,true,false,p99 latency 24 > 20 msec,2025-01-01T00:00:00.000Z",
  );
  assert.equal(rows.length, 3);
});

Deno.test("progress lines: the point, then its throughput and latency", () => {
  assert.equal(
    formatPointStart(point({ value: 4 }), { index: 3, total: 8 }),
    "[3/8] simple, batch size 1, http, input data random, concurrency 4\n",
  );
  assert.equal(
    formatPointStart(point({ mode: "request_rate", value: 50.5 }), { index: 3 }),
    "[3] simple, batch size 1, http, input data random, request rate 50.5\n",
  );
  const unstable = record({}, { throughput: 10, p99Ms: 3, stable: false });
  assert.equal(
    formatPointResult(unstable, { percentile: 99 }),
    "    throughput 10 infer/sec, p99 latency 3000 usec (unstable)\n",
  );
});
