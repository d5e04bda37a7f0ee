import assert from "node:assert/strict";
import type { OpenLoopSummary } from "../types/results.ts";
import { formatLevel, formatSummaryTable } from "./console.ts";
import { formatCsv } from "./csv.ts";
import { client, level } from "./testdata/fixtures.ts";

function openLoop(overrides: Partial<OpenLoopSummary> = {}): OpenLoopSummary {
  return {
    correctedAvgUs: 1500,
    correctedStdUs: 300,
    correctedPercentilesUs: new Map([[50, 1400], [90, 1800], [95, 2000], [99, 2500]]),
    sendCount: 100,
    sendRate: 20,
    sendLagP50Us: 3,
    sendLagP99Us: 250,
    sendLagMaxUs: 900,
    blockedCount: 0,
    maxSendLagUs: 1000,
    behindSchedule: false,
    ...overrides,
  };
}

Deno.test("rate levels keep perf_analyzer's lines and add the corrected figures after them", () => {
  const result = { ...level("request_rate", 20, client()), openLoop: openLoop() };
  const text = formatLevel(result, { protocol: "http" });
  assert.equal(
    text,
    `Request Rate: 20 inference requests per seconds
  Client: 
    Request count: 100
    Throughput: 20 infer/sec
    Avg latency: 1000 usec (standard deviation 100 usec)
    p50 latency: 1000 usec
    p90 latency: 1100 usec
    p95 latency: 1200 usec
    p99 latency: 1300 usec
    Avg HTTP time: 915 usec (send/recv 15 usec + response wait 900 usec)
    Corrected avg latency: 1500 usec (standard deviation 300 usec)
    Corrected p50 latency: 1400 usec
    Corrected p90 latency: 1800 usec
    Corrected p95 latency: 2000 usec
    Corrected p99 latency: 2500 usec
    Send rate: 20 req/sec (100 sends)
    Send lag: p50 3 usec, p99 250 usec, max 900 usec
    Sends held back by the in-flight limit: 0
`,
  );
  assert.doesNotMatch(formatSummaryTable([result]), /BEHIND SCHEDULE/);
});

Deno.test("a level behind schedule is marked in the level, the summary and the CSV", () => {
  const late = openLoop({ sendLagP99Us: 5000, blockedCount: 7, behindSchedule: true });
  const result = {
    ...level("request_rate", 20, client({ errorCount: 1, errors: [["x", 1]] })),
    openLoop: late,
  };
  const text = formatLevel(result, { protocol: "http" });
  assert.match(
    text,
    /Sends held back by the in-flight limit: 7\n {4}\[BEHIND SCHEDULE\] The p99 send lag \(5000 usec\) exceeds --max-send-lag \(1000 usec\).*\n {4}Failed requests: 1\n/,
  );
  assert.match(
    formatSummaryTable([result]),
    /\[BEHIND SCHEDULE\] Send lag over --max-send-lag at request rate 20\n$/,
  );
  const [header, row] = formatCsv([result], { mode: "request_rate" }).trim().split("\n")
    .map((line) => line.split(","));
  assert.deepEqual(header.slice(header.indexOf("Errors")), [
    "Errors",
    "Corrected Avg latency",
    "Corrected p50 latency",
    "Corrected p90 latency",
    "Corrected p95 latency",
    "Corrected p99 latency",
    "Send Rate",
    "Send Lag p50",
    "Send Lag p99",
    "Send Lag Max",
    "Blocked Sends",
    "Trustworthy",
  ]);
  assert.deepEqual(row.slice(header.indexOf("Errors")), [
    "1",
    "1500",
    "1400",
    "1800",
    "2000",
    "2500",
    "20",
    "3",
    "5000",
    "900",
    "7",
    "no",
  ]);
});
