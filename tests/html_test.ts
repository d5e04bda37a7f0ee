/**
 * The HTML report rendered by headless Chromium: the page's script must run
 * and draw every chart with one mark per level, percentile and window.
 * Skipped, saying why, without Chromium.
 */
import assert from "node:assert/strict";
import { Recorder } from "../lib/measure/recorder.ts";
import { summarizeClient } from "../lib/measure/stats.ts";
import type { LevelResult } from "../lib/types/results.ts";
import { DISTRIBUTION_PERCENTILES, renderHtmlReport } from "../lib/report/html.ts";
import { chartMarks, chromium, renderedDom, withoutScripts } from "./_chromium.ts";

if ("reason" in chromium) {
  console.warn(`Skipping the HTML rendering test: ${chromium.reason}.`);
}

/** Levels with real windows from a Recorder: level k has 2 + k windows of 40 requests. */
function levels(values: number[]): LevelResult[] {
  return values.map((value, k) => {
    const recorder = new Recorder();
    const windows = [];
    let now = 0;
    for (let w = 0; w < 2 + k; w++) {
      recorder.rotate();
      for (let i = 0; i < 40; i++) {
        const latency = value * (1 + (i % 10) / 10);
        recorder.record({
          start: now,
          sendEnd: now + 0.05,
          recvStart: now + latency - 0.05,
          end: now + latency,
          responses: 1,
        });
        now += 0.1;
      }
      windows.push(recorder.rotate());
    }
    return {
      mode: "concurrency",
      value,
      client: summarizeClient(windows.slice(-3), { batchSize: 1 }),
      stable: k !== 1,
      windows,
    };
  });
}

Deno.test({
  name: "the HTML report renders in headless Chromium with one mark per data point",
  ignore: "reason" in chromium,
  fn: async () => {
    const results = levels([1, 2, 4, 8]);
    const html = renderHtmlReport(results, {
      version: "0.0.0",
      model: { name: "simple <&>", version: "1" },
      mode: "concurrency",
      batchSize: 1,
      note: "Measured latency went over the set limit of 5 msec.",
    });
    assert.doesNotMatch(html, /(src|href)=["']?https?:/, "self-contained");
    const dom = await renderedDom(html);
    assert.match(dom, /<html[^>]*data-rendered="true"/, "the page's script ran to the end");
    assert.doesNotMatch(withoutScripts(dom), /data-render-error/);
    assert.match(dom, /simple &lt;&amp;&gt; v1/);
    const windows = results.reduce((n, r) => n + r.windows.length, 0);
    assert.deepEqual(
      Object.fromEntries(chartMarks(dom)),
      {
        "throughput-latency": { points: 4, bars: 0 },
        "components": { points: 0, bars: 4 },
        "percentiles": { points: 4 * DISTRIBUTION_PERCENTILES.length, bars: 0 },
        "window-throughput": { points: windows, bars: 0 },
        "window-latency": { points: windows, bars: 0 },
      },
    );
  },
});

Deno.test("the HTML report lists failed requests by cause, with an example of each", () => {
  const [level] = levels([1]);
  level.client.errors = [
    ["Server sent an error: out of memory", 3],
    ["Server returned 503: busy <now>", 2],
  ];
  level.client.errorCount = 5;
  const html = renderHtmlReport([level], {
    version: "0.0.0",
    model: { name: "m", version: "" },
    mode: "concurrency",
    batchSize: 1,
  });
  assert.match(html, /<h2>Failed requests<\/h2>/);
  assert.match(
    html,
    /<td>error event in the stream<\/td><td>3<\/td><td>Server sent an error: out of memory<\/td>/,
  );
  assert.match(
    html,
    /<td>HTTP 503<\/td><td>2<\/td><td>Server returned 503: busy &#60;now&#62;<\/td>/,
  );
  assert.doesNotMatch(
    renderHtmlReport(levels([1]), {
      version: "0.0.0",
      model: { name: "m", version: "" },
      mode: "concurrency",
      batchSize: 1,
    }),
    /Failed requests/,
  );
});
