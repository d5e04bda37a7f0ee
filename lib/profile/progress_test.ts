import assert from "node:assert/strict";
import { parseSlos } from "../measure/slo.ts";
import type { WindowData } from "../types/results.ts";
import { PLAIN_EVERY_MS, Progress, type ProgressOutput } from "./progress.ts";

/** A stand-in for stderr that keeps what was written. */
function output(terminal: boolean): ProgressOutput & { text: () => string } {
  const decoder = new TextDecoder();
  let written = "";
  return {
    isTerminal: () => terminal,
    writeSync: (bytes) => {
      written += decoder.decode(bytes);
      return bytes.length;
    },
    text: () => written,
  };
}

/** A window of `latenciesMs` over `seconds` from `startMs`. */
function window(latenciesMs: number[], options: { startMs: number; seconds: number }): WindowData {
  return {
    startMs: options.startMs,
    endMs: options.startMs + options.seconds * 1000,
    startWallNs: 0n,
    latenciesUs: Float64Array.from(latenciesMs, (ms) => ms * 1000),
    sendUsSum: 0,
    recvUsSum: 0,
    waitUsSum: 0,
    responseCount: latenciesMs.length,
    errorCount: 1,
    errors: new Map([["Server returned 503", 1]]),
    delayedCount: 0,
    correctedLatenciesUs: [],
    sendCount: 0,
    sendLagsUs: [],
    blockedCount: 0,
  };
}

Deno.test("on a terminal: one live line with the step, elapsed time, requests, figures and SLOs", () => {
  let now = 1000;
  const out = output(true);
  const progress = new Progress({
    enabled: true,
    output: out,
    now: () => now,
    slos: parseSlos("request_latency:p99<=30,request_throughput>=50"),
  });
  try {
    progress.step({ index: 3, total: 12, label: "simple, batch size 1" });
    const events = progress.events();
    events.levelStart!(4);
    let live = 7;
    events.live!(() => live);
    now += 2500;
    assert.equal(
      progress.text(),
      "point 3 of 12: simple, batch size 1 | 2.5 s | concurrency 4 for 2.5 s | 7 requests",
    );
    // A window of 100 requests in 2 s, p99 40 ms: the latency SLO breached, throughput met.
    const latencies = Array.from({ length: 100 }, (_, i) => (i < 97 ? 10 : 40));
    live = 0;
    events.window!(window(latencies, { startMs: 1000, seconds: 2 }), { level: 4, index: 0 });
    assert.equal(
      progress.text(),
      "point 3 of 12: simple, batch size 1 | 2.5 s | concurrency 4 for 2.5 s | 101 requests | " +
        "50 infer/s, p99 40 ms, 1 failed, request_latency:p99 40 > 30 msec BREACHED, " +
        "request_throughput 50 >= 50 req/sec ok",
    );
    // The line is redrawn in place, and cleared before other output.
    assert.ok(out.text().startsWith("\r\x1b[2Kpoint 3 of 12"));
    assert.ok(!out.text().includes("\n"));
    progress.clear();
    assert.ok(out.text().endsWith("\r\x1b[2K"));
  } finally {
    progress.close();
  }
});

Deno.test("without a terminal: a plain line now and then in a long level", () => {
  let now = 0;
  const out = output(false);
  const progress = new Progress({
    enabled: true,
    output: out,
    now: () => now,
    mode: "request_rate",
  });
  try {
    progress.step({ noun: "run", index: 2, total: 5, label: "simple" });
    assert.equal(out.text(), "", "the command prints its steps on stdout");
    progress.levelStart(250);
    now += PLAIN_EVERY_MS - 1;
    progress.window(window([5, 5], { startMs: 0, seconds: 1 }));
    assert.equal(out.text(), "", "nothing before a long level's first stretch");
    now += 1;
    progress.window(window([5, 5], { startMs: 1000, seconds: 1 }));
    assert.match(
      out.text(),
      /^run 2 of 5: simple \| 30 s \| request rate 250 for 30 s \| 6 requests \| 2 infer\/s, p99 5 ms, 1 failed\n$/,
    );
  } finally {
    progress.close();
  }
});

Deno.test("--no-progress: nothing at all", () => {
  const out = output(true);
  const progress = new Progress({ enabled: false, output: out });
  progress.step({ label: "x" });
  progress.levelStart(1);
  progress.window(window([1], { startMs: 0, seconds: 1 }));
  progress.close();
  assert.equal(out.text(), "");
});

Deno.test("the line's p99 is the reports' (perf_analyzer's rank), as its SLO figure", () => {
  const progress = new Progress({
    enabled: true,
    output: output(false),
    slos: parseSlos("request_latency:p99<=30"),
  });
  try {
    progress.levelStart(1);
    // 90 requests, one of them slow: the rank of p99 is the 89th, not the slowest.
    const latencies = Array.from({ length: 90 }, (_, i) => (i === 3 ? 40 : 10));
    progress.window(window(latencies, { startMs: 0, seconds: 1 }));
    assert.match(progress.text(), /p99 10 ms, 1 failed, request_latency:p99 10 <= 30 msec ok$/);
  } finally {
    progress.close();
  }
});
