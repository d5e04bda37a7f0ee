/**
 * The script of a configuration's detailed report (detailed.ts): throughput
 * and latency against the load, the latency breakdown of every point as
 * stacked bars, the server's memory. Marks carry data-point / data-bar.
 */
import { CHART_HELPERS } from "../report/html_template.ts";

export const DETAILED_SCRIPT = String.raw`
(function () {
  "use strict";
${CHART_HELPERS}
  var points = data.points;
  // Loads are powers of two, or bisected between them: the points sit in evenly spaced slots.

  function byLoad(name, title, yTitle, series) {
    var all = [];
    series.forEach(function (s) {
      points.forEach(function (p) { if (s.value(p) !== null) all.push(s.value(p)); });
    });
    if (all.length === 0) return;
    var f = frame(name, { title: title, x: [-0.5, points.length - 0.5], xTicks: [],
      y: [0, max(all) * 1.1], xTitle: data.loadLabel, yTitle: yTitle });
    points.forEach(function (p, i) {
      el("text", { x: f.x(i), y: H - M.b + 16, "text-anchor": "middle" }, f.svg, p.label);
    });
    series.forEach(function (s, k) {
      var drawn = [];
      points.forEach(function (p, i) {
        var v = s.value(p);
        if (v === null) return;
        drawn.push([f.x(i), f.y(v)]);
      });
      line(f.svg, drawn, color(k));
      points.forEach(function (p, i) {
        var v = s.value(p);
        if (v === null) return;
        point(f.svg, { cx: f.x(i), cy: f.y(v), r: 4.5, fill: p.candidate ? color(k) : "#fff",
          stroke: color(k), "stroke-width": 2, "data-load": p.value },
          data.loadLabel + " " + p.label + ": " + s.label + " " + fmt(v) + " " + s.unit +
          (p.candidate ? "" : " (" + p.status + ")"));
      });
    });
    legend(name, series.map(function (s, k) { return { label: s.label, color: color(k) }; }));
  }

  function breakdown() {
    var names = data.componentNames;
    var totals = points.map(function (p) {
      return p.segments.reduce(function (a, s) { return a + s.ms; }, 0);
    });
    if (max(totals) === 0) return;
    var f = frame("breakdown", { title: "Latency breakdown", x: [-0.5, points.length - 0.5],
      xTicks: [], y: [0, max(totals) * 1.1], xTitle: data.loadLabel,
      yTitle: "Average latency (ms)" });
    var width = (W - M.l - M.r) / Math.max(1, points.length) * 0.6;
    points.forEach(function (p, i) {
      var g = el("g", { "data-bar": "", "data-load": p.value }, f.svg);
      var base = 0, cx = f.x(i);
      p.segments.forEach(function (s) {
        var top = f.y(base + s.ms);
        var rect = el("rect", { x: cx - width / 2, y: top, width: width,
          height: Math.max(0, f.y(base) - top), fill: color(names.indexOf(s.name)),
          "data-segment": s.name }, g);
        el("title", {}, rect, data.loadLabel + " " + p.label + ": " + s.name + " " + fmt(s.ms) + " ms");
        base += s.ms;
      });
      el("text", { x: cx, y: H - M.b + 16, "text-anchor": "middle" }, f.svg, p.label);
    });
    legend("breakdown", data.componentsShown.map(function (n) {
      return { label: n, color: color(names.indexOf(n)) };
    }));
  }

  render(function () {
    byLoad("throughput", "Throughput", "Throughput (infer/sec)", [
      { label: "throughput", unit: "infer/sec", value: function (p) { return p.throughput; } },
    ]);
    byLoad("latency", "Latency", "Latency (ms)", [
      { label: "p99 latency", unit: "ms", value: function (p) { return p.p99Ms; } },
      { label: "p95 latency", unit: "ms", value: function (p) { return p.p95Ms; } },
      { label: "avg latency", unit: "ms", value: function (p) { return p.avgMs; } },
    ]);
    breakdown();
    byLoad("memory", "Server memory", "Resident memory (MB)", [
      { label: "server RAM", unit: "MB", value: function (p) { return p.ramMb; } },
    ]);
  });
})();
`;
