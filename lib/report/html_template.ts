/**
 * The page around the HTML report's data: style and the script that draws
 * the charts as inline SVG. Plain ES2017 with no dependencies, so the report
 * is one self-contained file that opens offline. Every chart is an <svg
 * data-chart="NAME"> whose marks carry data-point (or data-bar), which is what
 * tests count.
 */
import { LLM_CHARTS } from "./_llm_html.ts";

export const STYLE = `
:root { color-scheme: light; --ink: #1d2733; --muted: #5b6b7c; --grid: #e3e8ee; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 4px; }
p.caption { color: var(--muted); margin: 0 0 8px; }
.meta { color: var(--muted); margin-bottom: 8px; }
.note { background: #fff6df; border-left: 4px solid #e0a800; padding: 6px 10px; }
svg { background: #fff; border: 1px solid var(--grid); border-radius: 6px; width: 100%; height: auto;
  box-sizing: border-box; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg .title { font-size: 12px; fill: var(--ink); }
svg .grid { stroke: var(--grid); }
svg .axis { stroke: #9aa7b4; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px;
  margin-right: 5px; border-radius: 2px; background: var(--swatch); }
table { border-collapse: collapse; margin-top: 8px; }
th, td { padding: 3px 10px; text-align: right; border-bottom: 1px solid var(--grid); }
th { color: var(--muted); font-weight: 600; }
.error { color: #b00020; font-weight: 600; }
.scroll { overflow-x: auto; }
th.text, td.text { text-align: left; white-space: nowrap; }
tr.best td { background: #e7f5e9; font-weight: 600; }
td.missing { color: var(--muted); }
`;

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON that is safe inside a <script> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** A chart's heading, caption, legend and the element its script draws into. */
export function chartSection(name: string, title: string, caption: string): string {
  return `<h2>${title}</h2>\n<p class="caption">${caption}</p>\n` +
    `<div class="legend" id="legend-${name}"></div>\n<div id="chart-${name}"></div>\n`;
}

/**
 * A complete page: the title, `body` (HTML), then `data` as the
 * inferperf-data JSON that `script` reads.
 */
export function htmlPage(
  title: string,
  body: string,
  options: { data: unknown; script: string },
): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}<script type="application/json" id="inferperf-data">${scriptJson(options.data)}</script>
<script>${options.script}</script>
</body>
</html>
`;
}

/**
 * Drawing helpers shared by the reports' scripts, pasted inside each
 * script's function scope: `data` (the page's inferperf-data JSON), frame,
 * point, line, legend, render...
 */
export const CHART_HELPERS = String.raw`
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  // The page's content width (1100 px less padding): charts drawn at it fill the page.
  var W = 1052, H = 400, M = { l: 70, r: 20, t: 16, b: 48 };
  var data = JSON.parse(document.getElementById("inferperf-data").textContent);

  function el(name, attrs, parent, text) {
    var node = document.createElementNS(NS, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function color(i) { return COLORS[i % COLORS.length]; }
  function fmt(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    return Number(v.toPrecision(3)).toString();
  }
  function ticks(min, max, count) {
    if (!isFinite(min) || !isFinite(max)) return [0];
    if (!(max > min)) { max = min + 1; }
    var step = Math.pow(10, Math.floor(Math.log10((max - min) / count)));
    var err = (max - min) / count / step;
    step *= err >= 5 ? 10 : err >= 2 ? 5 : err >= 1.5 ? 2 : 1;
    var out = [];
    for (var v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(v);
    return out;
  }
  function linear(d0, d1, r0, r1) {
    var span = d1 - d0 || 1;
    return function (v) { return r0 + (v - d0) / span * (r1 - r0); };
  }
  /**
   * An empty chart with axes; returns the svg and the scales. Options beyond
   * the axes: height and left (margin) for tall charts with long row labels,
   * xTicks/yTicks to replace the automatic ticks ([] for none), xGrid for
   * vertical grid lines.
   */
  function frame(name, options) {
    var host = document.getElementById("chart-" + name);
    var h = options.height || H, m = { l: options.left || M.l, r: M.r, t: M.t, b: M.b };
    var svg = el("svg", { viewBox: "0 0 " + W + " " + h,
      "data-chart": name, role: "img", "aria-label": options.title }, host);
    var x0 = options.x[0], x1 = options.x[1], y0 = options.y[0], y1 = options.y[1];
    var xTicks = options.xTicks || ticks(x0, x1, 8);
    var yTicks = options.yTicks || ticks(y0, y1, 6);
    if (xTicks.length > 0) x1 = Math.max(x1, xTicks[xTicks.length - 1]);
    if (yTicks.length > 0) y1 = Math.max(y1, yTicks[yTicks.length - 1]);
    var x = linear(x0, x1, m.l, W - m.r), y = linear(y0, y1, h - m.b, m.t);
    yTicks.forEach(function (v) {
      el("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v), "class": "grid" }, svg);
      el("text", { x: m.l - 6, y: y(v) + 4, "text-anchor": "end" }, svg, fmt(v));
    });
    xTicks.forEach(function (v) {
      if (options.xGrid) el("line", { x1: x(v), x2: x(v), y1: m.t, y2: h - m.b, "class": "grid" }, svg);
      el("line", { x1: x(v), x2: x(v), y1: h - m.b, y2: h - m.b + 4, "class": "axis" }, svg);
      el("text", { x: x(v), y: h - m.b + 16, "text-anchor": "middle" }, svg,
        options.xLabel ? options.xLabel(v) : fmt(v));
    });
    el("line", { x1: m.l, x2: W - m.r, y1: h - m.b, y2: h - m.b, "class": "axis" }, svg);
    el("line", { x1: m.l, x2: m.l, y1: m.t, y2: h - m.b, "class": "axis" }, svg);
    el("text", { x: (m.l + W - m.r) / 2, y: h - 10, "text-anchor": "middle", "class": "title" },
      svg, options.xTitle);
    if (options.yTitle) {
      el("text", { x: 14, y: (m.t + h - m.b) / 2, "text-anchor": "middle", "class": "title",
        transform: "rotate(-90 14 " + (m.t + h - m.b) / 2 + ")" }, svg, options.yTitle);
    }
    return { svg: svg, x: x, y: y };
  }
  function point(svg, attrs, tip) {
    var c = el("circle", attrs, svg);
    c.setAttribute("data-point", "");
    el("title", {}, c, tip);
    return c;
  }
  function line(svg, points, stroke, dashed) {
    if (points.length < 2) return;
    el("polyline", { points: points.map(function (p) { return p.join(","); }).join(" "),
      fill: "none", stroke: stroke, "stroke-width": 2,
      "stroke-dasharray": dashed ? "4 3" : "none" }, svg);
  }
  /** A bound of data.limits ({label, value}) as a dashed red line across frame f, vertical at an x. */
  function limitLine(f, l, vertical) {
    var limit = "#b00020", at = vertical ? f.x(l.value) : f.y(l.value);
    el("line", { x1: vertical ? at : M.l, x2: vertical ? at : W - M.r,
      y1: vertical ? M.t : at, y2: vertical ? H - M.b : at,
      stroke: limit, "stroke-dasharray": "6 4", "data-limit": l.label }, f.svg);
    el("text", { x: vertical ? at + 4 : W - M.r - 4, y: vertical ? M.t + 10 : at - 5,
      "text-anchor": vertical ? "start" : "end", fill: limit, style: "fill: " + limit },
      f.svg, l.label);
  }
  /** Series i's point p of a search: filled when it is a candidate, large and data-best when best. */
  function searchMark(f, p, i, at, tip) {
    var c = point(f.svg, { cx: at[0], cy: at[1], r: p.best ? 7 : 4.5,
      fill: p.candidate ? color(i) : "#fff", stroke: p.best ? "#1d2733" : color(i),
      "stroke-width": 2, "data-series": i }, tip);
    if (p.best) c.setAttribute("data-best", "");
    return c;
  }
  function legend(name, entries) {
    var host = document.getElementById("legend-" + name);
    entries.forEach(function (e) {
      var span = document.createElement("span");
      span.style.setProperty("--swatch", e.color);
      span.textContent = e.label;
      host.appendChild(span);
    });
  }
  function max(values) { return values.reduce(function (a, b) { return Math.max(a, b); }, 0); }
  /** Draws the charts; marks the page rendered, or says why the charts are missing. */
  function render(draw) {
    try {
      draw();
      document.documentElement.setAttribute("data-rendered", "true");
      // How much of the page's width the charts take (the tests' check that they fill it).
      var chart = document.querySelector("svg[data-chart]");
      var page = document.body.getBoundingClientRect().width -
        parseFloat(getComputedStyle(document.body).paddingLeft) * 2;
      if (chart) {
        document.documentElement.setAttribute("data-chart-fill",
          (chart.getBoundingClientRect().width / page).toFixed(3));
      }
    } catch (error) {
      var p = document.createElement("p");
      p.className = "error";
      p.setAttribute("data-render-error", "");
      p.textContent = "The charts could not be drawn: " + error;
      document.body.insertBefore(p, document.body.firstChild);
    }
  }
`;

export const SCRIPT = String.raw`
(function () {
  "use strict";
${CHART_HELPERS}
${LLM_CHARTS}
  var levels = data.levels;
  var byValue = levels.slice().sort(function (a, b) { return a.order - b.order; });
  var unit = data.mode === "concurrency" ? "concurrency" : "request rate";

  function throughputLatency() {
    // Repeat runs: the means, with their confidence intervals as error bars.
    levels.forEach(function (l) {
      if (l.ci) { l.throughput = l.ci.throughput[0]; l.latencyMs = l.ci.latencyMs[0]; }
    });
    var f = frame("throughput-latency", {
      title: "Throughput vs latency",
      x: [0, max(levels.map(function (l) { return l.ci ? l.ci.throughput[2] : l.throughput; })) * 1.05],
      y: [0, max(levels.map(function (l) { return l.ci ? l.ci.latencyMs[2] : l.latencyMs; })) * 1.1],
      xTitle: "Throughput (infer/sec)", yTitle: data.latencyLabel + " (ms)" });
    byValue.forEach(function (l) {
      if (!l.ci) return;
      var x = f.x(l.throughput), y = f.y(l.latencyMs);
      var g = el("g", { "data-error-bar": "", "data-level": l.value, stroke: color(0),
        "stroke-width": 1.5 }, f.svg);
      el("line", { x1: f.x(l.ci.throughput[1]), x2: f.x(l.ci.throughput[2]), y1: y, y2: y }, g);
      el("line", { x1: x, x2: x, y1: f.y(l.ci.latencyMs[1]), y2: f.y(l.ci.latencyMs[2]) }, g);
      [f.x(l.ci.throughput[1]), f.x(l.ci.throughput[2])].forEach(function (cx) {
        el("line", { x1: cx, x2: cx, y1: y - 4, y2: y + 4 }, g);
      });
      [f.y(l.ci.latencyMs[1]), f.y(l.ci.latencyMs[2])].forEach(function (cy) {
        el("line", { x1: x - 4, x2: x + 4, y1: cy, y2: cy }, g);
      });
    });
    line(f.svg, byValue.map(function (l) { return [f.x(l.throughput), f.y(l.latencyMs)]; }), color(0));
    byValue.forEach(function (l) {
      point(f.svg, { cx: f.x(l.throughput), cy: f.y(l.latencyMs), r: 5, fill: color(0),
        "data-level": l.value },
        unit + " " + l.label + ": " + fmt(l.throughput) + " infer/sec, " + fmt(l.latencyMs) + " ms" +
        (l.stable ? "" : " (unstable)"));
      el("text", { x: f.x(l.throughput) + 7, y: f.y(l.latencyMs) - 7 }, f.svg, l.label);
    });
  }

  function components() {
    var parts = data.componentNames;
    var totals = byValue.map(function (l) {
      return l.componentsMs.reduce(function (a, b) { return a + b; }, 0);
    });
    var f = frame("components", { title: "Latency components",
      x: [0, byValue.length], xTicks: [], y: [0, max(totals) * 1.1],
      xTitle: unit, yTitle: "Average latency (ms)" });
    var slot = (W - M.l - M.r) / Math.max(1, byValue.length);
    byValue.forEach(function (l, i) {
      var g = el("g", { "data-bar": "", "data-level": l.value }, f.svg);
      var base = 0, left = M.l + slot * i + slot * 0.15;
      l.componentsMs.forEach(function (ms, k) {
        var top = f.y(base + ms), height = f.y(base) - top;
        var r = el("rect", { x: left, y: top, width: slot * 0.7, height: Math.max(0, height),
          fill: color(k), "data-segment": parts[k] }, g);
        el("title", {}, r, unit + " " + l.label + ": " + parts[k] + " " + fmt(ms) + " ms");
        base += ms;
      });
      el("text", { x: left + slot * 0.35, y: H - M.b + 16, "text-anchor": "middle" }, f.svg, l.label);
    });
    legend("components", parts.map(function (p, k) { return { label: p, color: color(k) }; }));
  }

  function percentiles() {
    var ps = data.distributionPercentiles;
    var pos = function (p) { return Math.log10(100 / (100 - p)); };
    var f = frame("percentiles", { title: "Latency percentiles",
      x: [pos(ps[0]), pos(ps[ps.length - 1])], xTicks: ps.map(pos),
      xLabel: function (v) { return ps[ps.map(pos).indexOf(v)] + "%"; },
      y: [0, max(levels.map(function (l) { return max(l.distributionMs); })) * 1.1],
      xTitle: "Percentile", yTitle: "Latency (ms)" });
    byValue.forEach(function (l, i) {
      line(f.svg, l.distributionMs.map(function (ms, k) { return [f.x(pos(ps[k])), f.y(ms)]; }),
        color(i));
      l.distributionMs.forEach(function (ms, k) {
        point(f.svg, { cx: f.x(pos(ps[k])), cy: f.y(ms), r: 3.5, fill: color(i),
          "data-level": l.value }, unit + " " + l.label + ": p" + ps[k] + " " + fmt(ms) + " ms");
      });
    });
    legend("percentiles", byValue.map(function (l, i) {
      return { label: unit + " " + l.label, color: color(i) };
    }));
  }

  function windows(name, value, yTitle) {
    var all = [];
    levels.forEach(function (l, i) {
      l.windows.forEach(function (w) { all.push({ level: l, index: i, w: w }); });
    });
    var f = frame(name, { title: yTitle + " per window",
      x: [0, max(all.map(function (a) { return a.w.endS; }))],
      y: [0, max(all.map(function (a) { return value(a.w); })) * 1.1],
      xTitle: "Time since start (s)", yTitle: yTitle });
    levels.forEach(function (l, i) {
      line(f.svg, l.windows.map(function (w) { return [f.x((w.startS + w.endS) / 2), f.y(value(w))]; }),
        color(i), true);
    });
    all.forEach(function (a) {
      var w = a.w;
      point(f.svg, { cx: f.x((w.startS + w.endS) / 2), cy: f.y(value(w)), r: 4,
        fill: w.reported ? color(a.index) : "#fff", stroke: color(a.index), "stroke-width": 2,
        "data-level": a.level.value },
        unit + " " + a.level.label + ", window " + fmt(w.startS) + "-" + fmt(w.endS) + " s: " +
        fmt(value(w)) + (w.reported ? " (reported)" : ""));
    });
    legend(name, levels.map(function (l, i) {
      return { label: unit + " " + l.label, color: color(i) };
    }));
  }

  render(function () {
    throughputLatency();
    components();
    percentiles();
    windows("window-throughput", function (w) { return w.throughput; }, "Throughput (infer/sec)");
    windows("window-latency", function (w) { return w.avgLatencyMs; }, "Avg latency (ms)");
    llmCharts(byValue, unit);
  });
})();
`;
