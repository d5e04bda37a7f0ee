/**
 * The HTML report's LLM charts (token-streaming runs): time to first token
 * and request latency distributions, the inter-token gap by position in the
 * answer, output token throughput per level and time to first token against
 * the prompt's length. Their data, their sections and their script, which
 * runs inside the report's script (CHART_HELPERS in scope).
 */
import { LLM_PERCENTILES } from "../measure/tokens.ts";
import type { Distribution, LevelResult } from "../types/results.ts";

/** What the LLM charts draw of one level. */
export interface LlmChartData {
  /** Milliseconds at LLM_PERCENTILES; empty when the level has no such figure. */
  ttftMs: number[];
  requestLatencyMs: number[];
  /** Mean gap (ms) between token i and i + 1. */
  gapByPositionMs: number[];
  outputTokenThroughput: number;
  /** Output tokens/s per user, on average. */
  perUserTokensPerSecond: number;
  /** [input tokens, time to first token in ms]. */
  ttftByInput: Array<[number, number]>;
}

const percentilesMs = (d: Distribution | undefined) =>
  d === undefined ? [] : LLM_PERCENTILES.map((p) => d.percentiles.get(p)! / 1000);

/** The level's LLM chart data, or undefined for a level without token-streaming requests. */
export function llmChartData(r: LevelResult): LlmChartData | undefined {
  const l = r.llm;
  if (l === undefined) return undefined;
  return {
    ttftMs: percentilesMs(l.timeToFirstTokenUs),
    requestLatencyMs: percentilesMs(l.requestLatencyUs),
    gapByPositionMs: (l.gapByPositionUs ?? []).map((us) => us / 1000),
    outputTokenThroughput: l.outputTokenThroughput,
    perUserTokensPerSecond: l.outputTokenThroughputPerUser?.avg ?? 0,
    ttftByInput: (l.ttftByInput ?? []).map(([tokens, us]) => [tokens, us / 1000]),
  };
}

/** The sections the LLM charts draw into: name, title, caption. */
export const LLM_SECTIONS: ReadonlyArray<readonly [string, string, string]> = [
  [
    "llm-ttft",
    "Time to first token",
    "Distribution of the time to first token at each level (exact percentiles).",
  ],
  [
    "llm-latency",
    "Request latency",
    "Distribution of the request latency (send to last output) at each level.",
  ],
  [
    "llm-itl-position",
    "Inter-chunk latency by position",
    "Mean gap between chunk N and chunk N + 1 over the level's requests (one token per chunk: the inter-token gap).",
  ],
  [
    "llm-throughput",
    "Output token throughput",
    "Output tokens per second of each level, all requests together.",
  ],
  [
    "llm-ttft-input",
    "Time to first token vs input length",
    "One point per request (up to 2,000 per level): prompt tokens against time to first token.",
  ],
];

/** The script's LLM part: `llmCharts(levels, unit)` draws every chart above. */
export const LLM_CHARTS = String.raw`
  var LLM_PERCENTILES = ${JSON.stringify(LLM_PERCENTILES)};
  function llmDistribution(name, levels, unit, pick, yTitle) {
    var shown = levels.filter(function (l) { return pick(l.llm).length > 0; });
    if (shown.length === 0) return;
    var f = frame(name, { title: yTitle, x: [0, 100], xTicks: [1, 10, 25, 50, 75, 90, 99],
      xLabel: function (v) { return "p" + v; },
      y: [0, max(shown.map(function (l) { return max(pick(l.llm)); })) * 1.1],
      xTitle: "Percentile", yTitle: yTitle });
    shown.forEach(function (l, i) {
      var values = pick(l.llm);
      line(f.svg, values.map(function (v, k) { return [f.x(LLM_PERCENTILES[k]), f.y(v)]; }), color(i));
      values.forEach(function (v, k) {
        point(f.svg, { cx: f.x(LLM_PERCENTILES[k]), cy: f.y(v), r: 3.5, fill: color(i),
          "data-level": l.value }, unit + " " + l.label + ": p" + LLM_PERCENTILES[k] + " " + fmt(v) + " ms");
      });
    });
    legend(name, shown.map(function (l, i) { return { label: unit + " " + l.label, color: color(i) }; }));
  }
  function llmPositions(levels, unit) {
    var shown = levels.filter(function (l) { return l.llm.gapByPositionMs.length > 0; });
    if (shown.length === 0) return;
    var f = frame("llm-itl-position", { title: "Inter-token latency by position",
      x: [1, max(shown.map(function (l) { return l.llm.gapByPositionMs.length; }))],
      y: [0, max(shown.map(function (l) { return max(l.llm.gapByPositionMs); })) * 1.1],
      xTitle: "Token position (gap after token N)", yTitle: "Mean gap (ms)" });
    shown.forEach(function (l, i) {
      var gaps = l.llm.gapByPositionMs;
      line(f.svg, gaps.map(function (v, k) { return [f.x(k + 1), f.y(v)]; }), color(i));
      gaps.forEach(function (v, k) {
        point(f.svg, { cx: f.x(k + 1), cy: f.y(v), r: 2, fill: color(i), "data-level": l.value },
          unit + " " + l.label + ": token " + (k + 1) + " to " + (k + 2) + ": " + fmt(v) + " ms");
      });
    });
    legend("llm-itl-position", shown.map(function (l, i) {
      return { label: unit + " " + l.label, color: color(i) };
    }));
  }
  function llmThroughput(levels, unit) {
    var f = frame("llm-throughput", { title: "Output token throughput",
      x: [0, levels.length], xTicks: [],
      y: [0, max(levels.map(function (l) { return l.llm.outputTokenThroughput; })) * 1.1],
      xTitle: unit, yTitle: "Output tokens/sec" });
    var slot = (W - M.l - M.r) / Math.max(1, levels.length);
    levels.forEach(function (l, i) {
      var g = el("g", { "data-bar": "", "data-level": l.value }, f.svg);
      var left = M.l + slot * i + slot * 0.2, top = f.y(l.llm.outputTokenThroughput);
      var r = el("rect", { x: left, y: top, width: slot * 0.6, height: Math.max(0, f.y(0) - top),
        fill: color(0) }, g);
      el("title", {}, r, unit + " " + l.label + ": " + fmt(l.llm.outputTokenThroughput) +
        " tokens/sec (" + fmt(l.llm.perUserTokensPerSecond) + " per user)");
      el("text", { x: left + slot * 0.3, y: H - M.b + 16, "text-anchor": "middle" }, f.svg, l.label);
    });
  }
  function llmScatter(levels, unit) {
    var shown = levels.filter(function (l) { return l.llm.ttftByInput.length > 0; });
    if (shown.length === 0) return;
    var all = [];
    shown.forEach(function (l) { all = all.concat(l.llm.ttftByInput); });
    var f = frame("llm-ttft-input", { title: "Time to first token vs input length",
      x: [0, max(all.map(function (p) { return p[0]; })) * 1.05],
      y: [0, max(all.map(function (p) { return p[1]; })) * 1.1],
      xTitle: "Input tokens", yTitle: "Time to first token (ms)" });
    shown.forEach(function (l, i) {
      l.llm.ttftByInput.forEach(function (p) {
        point(f.svg, { cx: f.x(p[0]), cy: f.y(p[1]), r: 2.5, fill: color(i), "fill-opacity": 0.6,
          "data-level": l.value }, unit + " " + l.label + ": " + p[0] + " tokens, " + fmt(p[1]) + " ms");
      });
    });
    legend("llm-ttft-input", shown.map(function (l, i) {
      return { label: unit + " " + l.label, color: color(i) };
    }));
  }
  function llmCharts(levels, unit) {
    var llm = levels.filter(function (l) { return l.llm; });
    if (llm.length === 0) return;
    llmDistribution("llm-ttft", llm, unit, function (d) { return d.ttftMs; }, "Time to first token (ms)");
    llmDistribution("llm-latency", llm, unit, function (d) { return d.requestLatencyMs; },
      "Request latency (ms)");
    llmPositions(llm, unit);
    llmThroughput(llm, unit);
    llmScatter(llm, unit);
  }
`;
