/**
 * The model config search's summary page rendered by headless Chromium: the
 * top configurations' curves with the constraint drawn, the best's
 * config.pbtxt and why it won, every variant in the table. Skipped, saying
 * why, without Chromium.
 */
import assert from "node:assert/strict";
import { parseGoals, type PointRecord } from "../lib/sweep/mod.ts";
import type { LevelResult } from "../lib/types/results.ts";
import {
  parseObjectives,
  printPdf,
  renderDetailedHtml,
  renderSearchHtml,
  type VariantOutcome,
} from "../lib/search/mod.ts";
import { chartMarks, chromium, renderedDom, withoutScripts } from "./_chromium.ts";

if ("reason" in chromium) {
  console.warn(`Skipping the search page rendering test: ${chromium.reason}.`);
}

function record(name: string, value: number, throughput: number, p99Ms: number): PointRecord {
  return {
    point: {
      model: name,
      batchSize: 1,
      protocol: "http",
      inputData: "random",
      mode: "concurrency",
      value,
    },
    result: {
      mode: "concurrency",
      value,
      stable: true,
      windows: [],
      client: {
        requestCount: 100,
        responseCount: 100,
        errorCount: 0,
        errors: [],
        responseThroughput: throughput,
        delayedCount: 0,
        durationMs: 1000,
        throughput,
        avgLatencyUs: p99Ms * 800,
        stdLatencyUs: 0,
        avgSendUs: 0,
        avgRecvUs: 0,
        avgWaitUs: 0,
        percentilesUs: new Map([[99, p99Ms * 1000]]),
      },
    } as LevelResult,
    measuredAt: "",
  };
}

/** count instances x max batch `batch` of a 20 ms model: 50 x count x batch infer/s at most. */
function variant(n: number, count: number, batch: number): VariantOutcome {
  const name = `delay_config_${n}`;
  const config = {
    name,
    backend: "identity",
    max_batch_size: batch,
    instance_group: [{ kind: "KIND_CPU", count }],
    dynamic_batching: {},
  };
  const peak = 50 * count * batch;
  const records = [1, 2, 4, 8, 16].map((c) =>
    record(name, c, Math.min(50 * c, peak), 20 * Math.max(1, c * 50 / peak))
  );
  return { variant: { name, model: "delay", config }, records };
}

Deno.test({
  name:
    "the search summary page renders the top configurations, the best's config and every variant",
  ignore: "reason" in chromium,
  fn: async () => {
    const variants = [variant(0, 1, 1), variant(1, 1, 4), variant(2, 2, 4), variant(3, 4, 4)];
    variants.push({
      variant: { name: "delay_config_4", model: "delay", config: { name: "delay_config_4" } },
      records: [],
      failure: "the server refused it: <bad>",
    });
    const html = renderSearchHtml({
      model: {
        name: "delay",
        batchSizes: [1],
        objectives: parseObjectives(["perf_throughput=10", "perf_latency_p99=5"]),
        goals: parseGoals("throughput", ["max-perf_latency_p99=60"]),
      },
      variants,
    }, { version: "0.0.0", numConfigs: 3 });
    assert.doesNotMatch(html, /(src|href)=["']?https?:/, "self-contained");
    const dom = await renderedDom(html);
    assert.match(dom, /<html[^>]*data-rendered="true"/, "the page's script ran to the end");
    const page = withoutScripts(dom);
    assert.doesNotMatch(page, /data-render-error/);
    // Three curves of five points each; one best point; the p99 bound dashed.
    assert.deepEqual(Object.fromEntries(chartMarks(dom)), { curve: { points: 15, bars: 0 } });
    assert.equal(page.match(/<circle[^>]*data-best/g)?.length, 1);
    assert.match(page, /data-limit="max-p99-latency=60"/);
    const top = [...page.matchAll(/data-top="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(top.length, 3);
    assert.equal(top[0], "delay_config_3", "4 instances x 4 serve the most within 60 ms");
    assert.match(page, /<h2>Why delay_config_3 won<\/h2>/);
    assert.match(page, /Constraints met at its best point: max-p99-latency=60 \(/);
    assert.match(page, /<pre data-best-config="">[^<]*max_batch_size: 4[^<]*count: 4/);
    const rows = [...page.matchAll(/<tr[^>]*data-variant="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(rows, variants.map((v) => v.variant.name));
    assert.match(page, /not measured: the server refused it: &lt;bad&gt;/);
  },
});

Deno.test({
  name: "a configuration's detailed report renders its four charts and every point; its PDF prints",
  ignore: "reason" in chromium,
  fn: async () => {
    const v = variant(2, 2, 4);
    v.records = v.records.map((r, i) => ({
      ...r,
      result: {
        ...r.result,
        serverRamMb: 25 + i,
        // The smallest point has no server statistics: one unsplit bar.
        ...(i === 0 ? {} : {
          server: [{
            model: v.variant.name,
            version: "1",
            inferenceCount: 100,
            executionCount: 50,
            successCount: 100,
            avgRequestUs: 21_000,
            overheadUs: 100,
            queueUs: 1000 * i,
            computeInputUs: 50,
            computeInferUs: 20_000,
            computeOutputUs: 40,
            cacheHitCount: 0,
            cacheHitUs: 0,
            cacheMissCount: 0,
            cacheMissUs: 0,
          }],
        }),
      },
    }));
    const model = {
      name: "delay",
      batchSizes: [1],
      objectives: parseObjectives([]),
      goals: parseGoals("throughput", ["max-perf_latency_p99=60"]),
    };
    const html = renderDetailedHtml({ model, variant: v }, { version: "0.0.0" });
    assert.doesNotMatch(html, /(src|href)=["']?https?:/, "self-contained");
    const dom = await renderedDom(html);
    assert.match(dom, /<html[^>]*data-rendered="true"/, "the page's script ran to the end");
    const page = withoutScripts(dom);
    assert.doesNotMatch(page, /data-render-error/);
    // Five points: throughput, three latencies, one bar each, the memory.
    assert.deepEqual(Object.fromEntries(chartMarks(dom)), {
      throughput: { points: 5, bars: 0 },
      latency: { points: 10, bars: 0 },
      breakdown: { points: 0, bars: 5 },
      memory: { points: 5, bars: 0 },
    });
    // The latency has no p95 here (only p99 and the average).
    assert.equal(page.match(/data-segment="Server queue"/g)?.length, 4);
    assert.equal(page.match(/data-segment="Not split \(no server statistics\)"/g)?.length, 1);
    assert.equal(page.match(/<tr data-point-row=/g)?.length, 5);
    assert.match(page, /<pre data-config="">[^<]*count: 2/);
    const dir = Deno.makeTempDirSync();
    try {
      Deno.writeTextFileSync(`${dir}/page.html`, html);
      assert.equal(await printPdf(`${dir}/page.html`, `${dir}/page.pdf`), undefined);
      const pdf = Deno.readFileSync(`${dir}/page.pdf`);
      assert.equal(new TextDecoder().decode(pdf.slice(0, 5)), "%PDF-");
      assert.ok(pdf.length > 10_000, `${pdf.length} bytes`);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
