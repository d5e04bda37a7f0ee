import assert from "node:assert/strict";
import { LatencyHistogram } from "../measure/histogram.ts";
import { addShardRequests, mergeExports, mergeKind, mergeSummaries, parseExact } from "./merge.ts";

function summary(latenciesUs: number[], options: { url: string; value: number }) {
  const histogram = LatencyHistogram.fromMicroseconds(latenciesUs);
  const mean = latenciesUs.reduce((a, b) => a + b, 0) / latenciesUs.length;
  const client = {
    request_count: latenciesUs.length,
    response_count: latenciesUs.length,
    error_count: 0,
    errors: [],
    duration_ms: 1000,
    throughput: latenciesUs.length,
    response_throughput: latenciesUs.length,
    avg_latency_us: mean,
    std_latency_us: 0,
    percentiles_us: { "50": 0, "99": 0 },
    avg_send_us: 1,
    avg_recv_us: 2,
    avg_wait_us: 3,
    delayed_count: 0,
  };
  return {
    schema_version: 1,
    run_start_unix_ms: 5,
    settings: { mode: "concurrency", url: options.url },
    levels: [{
      mode: "concurrency",
      value: options.value,
      stable: true,
      client,
      latency_components_us: { client_send: 1 },
      latency_histogram: histogram.encode(),
      windows: [{
        start_ms: 0,
        end_ms: 1000,
        reported: true,
        request_count: latenciesUs.length,
        error_count: 0,
        throughput: 1,
        avg_latency_us: mean,
        std_latency_us: 0,
        percentiles_us: { "50": mean },
      }],
      server: [{ model: "m", version: "1", inference_count: 10, queue_us: 4 }],
    }],
  };
}

Deno.test("summaries merge: counts add, percentiles from the merged histograms", () => {
  const a = [100, 200, 300];
  const b = [1000, 2000];
  const merged = mergeSummaries([
    summary(a, { url: "h1", value: 2 }),
    summary(b, { url: "h2", value: 3 }),
  ]);
  const [level] = merged.levels;
  assert.equal(level.value, 5, "runs of different values: no one run's value names the level");
  assert.equal(level.merged_total_value, 5);
  assert.equal(level.merged_runs, 2);
  assert.equal(level.client.request_count, 5);
  assert.equal(level.client.throughput, 5);
  assert.equal(level.client.avg_latency_us, 720);
  const all = LatencyHistogram.fromMicroseconds([...a, ...b]);
  assert.equal(level.client.percentiles_us["99"], all.percentilesNs([99])[0] / 1000);
  assert.equal(LatencyHistogram.decode(level.latency_histogram).count, 5);
  assert.equal(level.server[0].inference_count, 20, "two servers add up");
  const shared = mergeSummaries([
    summary(a, { url: "h", value: 1 }),
    summary(b, { url: "h", value: 1 }),
  ]);
  assert.equal(shared.levels[0].server[0].inference_count, 10, "one server counted every run");
  assert.equal(shared.levels[0].value, 1, "two runs at concurrency 1 are a concurrency-1 level");
  assert.equal(shared.levels[0].merged_total_value, 2);
});

Deno.test("exports merge: requests by time with nanoseconds kept, histograms merged", () => {
  const h = (us: number[]) => LatencyHistogram.fromMicroseconds(us).encode();
  const run = (ts: string, us: number[]) =>
    parseExact(
      `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"timestamp":${ts}}],` +
        `"window_boundaries":[1,2],"window_latency_histograms":["${h(us)}"]}],"version":"v"}`,
    );
  const a = run("1795612772847313119", [100]);
  const b = run("1795612772847313118", [200]);
  assert.equal(mergeKind(a, "a.json"), "export");
  const text = JSON.stringify(mergeExports([a, b]));
  assert.match(
    text,
    /"requests":\[\{"timestamp":1795612772847313118\},\{"timestamp":1795612772847313119\}\]/,
  );
  assert.match(text, /"value":1/, "both runs at concurrency 1");
  const merged = JSON.parse(text).experiments[0].window_latency_histograms[0];
  assert.equal(LatencyHistogram.decode(merged).count, 2);
  const sharded = JSON.stringify(addShardRequests(a, [b]));
  assert.match(sharded, /"value":1/);
  assert.match(sharded, /313118\},\{"timestamp":1795612772847313119/);
});

Deno.test("exports merge: one run behind schedule puts the merged level behind schedule", () => {
  const run = (mark: string) =>
    parseExact(
      `{"experiments":[{"experiment":{"mode":"request_rate","value":9},"requests":[],` +
        `"window_boundaries":[1,2]${mark}}],"version":"v"}`,
    );
  const late = run(',"inferperf_behind_schedule":true');
  for (const runs of [[late, run("")], [run(""), late]]) {
    assert.equal(mergeExports(runs).experiments[0].inferperf_behind_schedule, true);
  }
  assert.equal(
    mergeExports([run(""), run("")]).experiments[0].inferperf_behind_schedule,
    undefined,
  );
});

Deno.test("merge refuses files that are neither summaries nor exports", () => {
  assert.throws(() => mergeKind({ foo: 1 }, "x.json"), /x.json is neither a summary JSON/);
});

Deno.test("exports merge: a request rate stays a double, FP32 values and failed requests kept", () => {
  const run = (rate: string, failed: string) =>
    parseExact(
      `{"experiments":[{"experiment":{"mode":"request_rate","value":${rate}},"requests":[` +
        `{"timestamp":2,"request_inputs":{"X":1.0}}],"window_boundaries":[1,2],` +
        `"failed_requests":[{"timestamp":${failed},"request_inputs":{},"error":"e"}]}],` +
        `"version":"v","service_kind":"triton","endpoint":""}`,
    );
  const text = JSON.stringify(mergeExports([run("4.0", "5"), run("4.0", "3")]));
  assert.match(text, /"experiment":\{"mode":"request_rate","value":4\.0\}/);
  assert.match(text, /"request_inputs":\{"X":1\.0\}/);
  assert.deepEqual(
    JSON.parse(text).experiments[0].failed_requests.map((r: { timestamp: number }) => r.timestamp),
    [3, 5],
  );
  assert.match(JSON.stringify(addShardRequests(run("8.0", "1"), [])), /"value":8\.0/);
});
