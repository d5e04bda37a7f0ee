/**
 * The HTML report rendered by headless Chromium: the page's script must run
 * and draw every chart with one mark per level, percentile and window.
 * Chromium comes from the Debian package `chromium`; when it is missing and
 * cannot be installed, the test is skipped with a message saying so.
 */
import assert from "node:assert/strict";
import { Recorder } from "../lib/measure/recorder.ts";
import { summarizeClient } from "../lib/measure/stats.ts";
import type { LevelResult } from "../lib/measure/types.ts";
import { DISTRIBUTION_PERCENTILES, renderHtmlReport } from "../lib/report/html.ts";

const INSTALL_TIMEOUT_MS = 240_000;

async function runs(
  command: string,
  args: string[],
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args,
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      ...(options.env ? { env: options.env } : {}),
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** The chromium binary, installing the Debian package when root may; else why not. */
async function findChromium(): Promise<{ path: string } | { reason: string }> {
  for (const path of ["chromium", "chromium-browser"]) {
    if (await runs(path, ["--version"])) return { path };
  }
  if (Deno.uid() !== 0 || !(await runs("apt-get", ["--version"]))) {
    return { reason: "chromium is not installed, and installing it needs apt-get and root" };
  }
  const install = ["install", "-y", "-qq", "--no-install-recommends", "chromium"];
  const apt = { timeoutMs: INSTALL_TIMEOUT_MS, env: { DEBIAN_FRONTEND: "noninteractive" } };
  // Package lists may be missing on a fresh machine: update only when a plain install fails.
  const installed = await runs("apt-get", install, apt) ||
    (await runs("apt-get", ["update", "-qq"], apt) && await runs("apt-get", install, apt));
  if (installed && await runs("chromium", ["--version"])) return { path: "chromium" };
  return { reason: "chromium is not installed and `apt-get install chromium` failed" };
}

const chromium = await findChromium();
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

/** Marks per chart in the DOM Chromium built (scripts excluded: they mention the same names). */
function marks(dom: string): Map<string, { points: number; bars: number }> {
  const html = dom.replace(/<script[\s\S]*?<\/script>/g, "");
  const out = new Map<string, { points: number; bars: number }>();
  for (const svg of html.matchAll(/<svg[^>]*data-chart="([a-z-]+)"[^>]*>([\s\S]*?)<\/svg>/g)) {
    out.set(svg[1], {
      points: svg[2].match(/<circle[^>]*data-point/g)?.length ?? 0,
      bars: svg[2].match(/<g[^>]*data-bar/g)?.length ?? 0,
    });
  }
  return out;
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
    const dir = await Deno.makeTempDir();
    try {
      const file = `${dir}/report.html`;
      await Deno.writeTextFile(file, html);
      const { stdout, success } = await new Deno.Command((chromium as { path: string }).path, {
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          `--user-data-dir=${dir}/profile`,
          "--dump-dom",
          `file://${file}`,
        ],
        stdout: "piped",
        stderr: "null",
        signal: AbortSignal.timeout(60_000),
      }).output();
      assert.ok(success, "chromium ran");
      const dom = new TextDecoder().decode(stdout);
      assert.match(dom, /<html[^>]*data-rendered="true"/, "the page's script ran to the end");
      assert.doesNotMatch(dom.replace(/<script[\s\S]*?<\/script>/g, ""), /data-render-error/);
      assert.match(dom, /simple &lt;&amp;&gt; v1/);
      const windows = results.reduce((n, r) => n + r.windows.length, 0);
      assert.deepEqual(
        Object.fromEntries(marks(dom)),
        {
          "throughput-latency": { points: 4, bars: 0 },
          "components": { points: 0, bars: 4 },
          "percentiles": { points: 4 * DISTRIBUTION_PERCENTILES.length, bars: 0 },
          "window-throughput": { points: windows, bars: 0 },
          "window-latency": { points: windows, bars: 0 },
        },
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
