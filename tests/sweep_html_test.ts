/**
 * The sweep's HTML report rendered by headless Chromium: its script must run
 * and draw one curve point per plotted point, one stacked bar per point and
 * the constraint lines. Skipped, saying why, without Chromium.
 */
import assert from "node:assert/strict";
import { renderSweepHtmlReport } from "../lib/sweep/html.ts";
import { parseGoals } from "../lib/sweep/goals.ts";
import { record } from "../lib/sweep/testdata/records.ts";
import { chartMarks, chromium, renderedDom, withoutScripts } from "./_chromium.ts";

if ("reason" in chromium) {
  console.warn(`Skipping the sweep HTML rendering test: ${chromium.reason}.`);
}

Deno.test({
  name: "the sweep HTML report renders in headless Chromium with one mark per point",
  ignore: "reason" in chromium,
  fn: async () => {
    const records = [1, 2, 4].flatMap((value) => [
      record({ model: "slow <&>", value }, { throughput: 50 * value, p99Ms: 8 * value }),
      record({ model: "batched", batchSize: 4, value }, {
        throughput: 200 * value,
        p99Ms: 5 * value,
      }),
    ]);
    // A point without server statistics, one without the plotted percentile.
    delete records[1]!.result.server;
    records[5]!.result.client.percentilesUs.delete(99);
    const html = renderSweepHtmlReport(records, {
      version: "0.0.0",
      goals: parseGoals("throughput", ["max-p99-latency=20", "min-throughput=60"]),
    });
    const dom = await renderedDom(html);
    assert.match(dom, /<html[^>]*data-rendered="true"/, "the page's script ran to the end");
    const page = withoutScripts(dom);
    assert.doesNotMatch(page, /data-render-error/);
    assert.match(page, /slow &lt;&amp;&gt;/);
    assert.deepEqual(Object.fromEntries(chartMarks(dom)), {
      curve: { points: records.length - 1, bars: 0 },
      components: { points: 0, bars: records.length },
    });
    assert.equal(page.match(/<circle[^>]*data-best/g)?.length, 2, "one best point per model");
    assert.equal(page.match(/<g[^>]*data-best/g)?.length, 2);
    assert.deepEqual(
      [...page.matchAll(/<line[^>]*data-limit="([^"]+)"/g)].map((m) => m[1]),
      ["max-p99-latency=20", "min-throughput=60"],
    );
    const segments = [...page.matchAll(/<rect[^>]*data-segment="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(segments.length, (records.length - 1) * 4 + 2, "the unsplit point has two");
    assert.equal(segments.filter((s) => s.includes("no server statistics")).length, 1);
  },
});
