import assert from "node:assert/strict";
import { mergeGpuMetrics } from "./gpu_metrics.ts";
import {
  defaultMetricsUrl,
  gpuMetricsOf,
  MetricsScraper,
  parseMetricsUrl,
} from "./metrics_scraper.ts";
import { parsePrometheusText } from "./prometheus.ts";

const GPU0 = "GPU-1f0e5d2c-7b3a-4c1e-9a8d-00005eed0000";
const GPU1 = "GPU-1f0e5d2c-7b3a-4c1e-9a8d-00005eed0001";

/** A scrape as the reference server (and Triton) writes it. */
function exposition(gpus: Array<[string, number, number, number, number]>): string {
  const family = (name: string, type: string, value: (g: typeof gpus[number]) => number) =>
    `# HELP ${name} ...\n# TYPE ${name} ${type}\n` +
    gpus.map((g) => `${name}{gpu_uuid="${g[0]}"} ${value(g)}\n`).join("");
  return 'nv_inference_count{model="simple",version="1"} 42\n' +
    family("nv_gpu_utilization", "gauge", (g) => g[1]) +
    family("nv_gpu_memory_total_bytes", "gauge", (g) => g[4]) +
    family("nv_gpu_memory_used_bytes", "gauge", (g) => g[3]) +
    family("nv_gpu_power_usage", "gauge", (g) => g[2]);
}

/** Three scrapes of two GPUs: [uuid, utilization, watts, used bytes, total bytes]. */
const RECORDED = [
  exposition([[GPU0, 0.2, 100, 3e9, 17179869184], [GPU1, 0.9, 250, 5e9, 17179869184]]),
  exposition([[GPU0, 0.4, 140, 4e9, 17179869184], [GPU1, 0.6, 200, 4e9, 17179869184]]),
  exposition([[GPU0, 0.6, 120, 3.5e9, 17179869185], [GPU1, 0.3, 150, 4.5e9, 17179869184]]),
];

/** What seed 004's table asks for: utilization and power averaged, used memory max, total first. */
function assertSeedAggregation(merged: ReturnType<typeof mergeGpuMetrics>): void {
  const close = (actual: number | undefined, expected: number) =>
    assert.ok(Math.abs(actual! - expected) < 1e-9, `${actual} != ${expected}`);
  close(merged.utilization.get(GPU0), 0.4);
  close(merged.utilization.get(GPU1), 0.6);
  close(merged.powerWatts.get(GPU0), 120);
  close(merged.powerWatts.get(GPU1), 200);
  assert.equal(merged.memoryUsedBytes.get(GPU0), 4e9);
  assert.equal(merged.memoryUsedBytes.get(GPU1), 5e9);
  assert.equal(merged.memoryTotalBytes.get(GPU0), 17179869184);
  assert.equal(merged.memoryTotalBytes.get(GPU1), 17179869184);
}

Deno.test("a recorded scrape sequence aggregates per GPU as seed 004 says", () => {
  const merged = mergeGpuMetrics(RECORDED.map((text) => gpuMetricsOf(parsePrometheusText(text))));
  assertSeedAggregation(merged);
});

Deno.test("metrics URLs: perf_analyzer's default and the accepted spellings", () => {
  assert.equal(defaultMetricsUrl("localhost:8000"), "localhost:8002/metrics");
  assert.equal(defaultMetricsUrl("http://10.0.0.5:9000/base"), "10.0.0.5:8002/metrics");
  assert.equal(defaultMetricsUrl("[::1]:8000"), "[::1]:8002/metrics");
  const plain = parseMetricsUrl("[::1]:8002/metrics");
  assert.equal(plain.endpoint.hostname, "::1");
  assert.equal(plain.endpoint.port, 8002);
  assert.equal(plain.path, "/metrics");
  const secure = parseMetricsUrl("https://gpu-host/m?x=1");
  assert.equal(secure.endpoint.port, 443);
  assert.ok(secure.endpoint.tls);
  assert.equal(secure.path, "/m?x=1");
  assert.throws(() => parseMetricsUrl("ftp://host/metrics"), RangeError);
  assert.throws(() => parseMetricsUrl("http://"), RangeError);
});

Deno.test("the scraper samples on its own timer and merges the scrapes of a time range", async () => {
  let served = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      served < RECORDED.length ? new Response(RECORDED[served++]) : new Response("", {
        status: 503,
      }),
  );
  const scraper = new MetricsScraper(`http://127.0.0.1:${server.addr.port}/metrics`, {
    intervalMs: 10,
  });
  const start = performance.now();
  try {
    await scraper.start();
    while (served < RECORDED.length) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    const end = performance.now();
    assertSeedAggregation(scraper.take(start, end)!);
    assert.equal(scraper.take(end + 1, end + 2), undefined, "no scrape in a later range");
  } finally {
    await scraper.close();
    await server.shutdown();
  }
});

Deno.test("an unreachable metrics URL fails a strict start in one line naming it", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const scraper = new MetricsScraper(`127.0.0.1:${port}/metrics`, { intervalMs: 5 });
  await assert.rejects(
    () => scraper.start({ strict: true }),
    /^ServerFeatureError: --collect-metrics: cannot read server metrics from "127\.0\.0\.1:\d+\/metrics": .*refused.* --require-metrics\)$/i,
  );
  await scraper.close();
  assert.equal(scraper.take(0, performance.now()), undefined);
});

Deno.test("an endpoint that fails from the start warns once, says why, and is read once it answers", async () => {
  let served = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => ++served > 3 ? new Response(RECORDED[0]) : new Response("", { status: 404 }),
  );
  const url = `http://127.0.0.1:${server.addr.port}/metrics`;
  const warnings: string[] = [];
  const scraper = new MetricsScraper(url, { intervalMs: 5, onWarning: (w) => warnings.push(w) });
  try {
    await scraper.start();
    assert.equal(
      scraper.failure,
      `cannot read server metrics from "${url}": the server answered 404`,
    );
    const from = performance.now();
    while (served < 5) await new Promise((r) => setTimeout(r, 5));
    assert.equal(scraper.failure, undefined);
    assert.ok(scraper.take(from, performance.now()), "the scrapes after it answered count");
  } finally {
    await scraper.close();
    await server.shutdown();
  }
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0], /the server answered 404\. Measuring continues without them/);
});

Deno.test("a metrics endpoint that fails after the first scrape warns once; scraping goes on", async () => {
  let served = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      ++served === 1 || served > 4 ? new Response(RECORDED[0]) : new Response("", { status: 503 }),
  );
  const warnings: string[] = [];
  const scraper = new MetricsScraper(`http://127.0.0.1:${server.addr.port}/metrics`, {
    intervalMs: 5,
    onWarning: (w) => warnings.push(w),
  });
  try {
    await scraper.start();
    while (served < 6) await new Promise((r) => setTimeout(r, 5));
  } finally {
    await scraper.close();
    await server.shutdown();
  }
  assert.deepEqual(warnings, [
    `Cannot collect server metrics from "http://127.0.0.1:${server.addr.port}/metrics": ` +
    "the server answered 503. Measuring continues without them (levels without metrics say so).",
  ]);
});
