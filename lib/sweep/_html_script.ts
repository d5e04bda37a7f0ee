/**
 * The script of the sweep report (sweep_html.ts): the throughput-latency
 * curve of each series and the latency components of each point, as inline
 * SVG. Marks carry data-point / data-bar (and data-best) for tests.
 */
import { CHART_HELPERS } from "../report/html_template.ts";

export const SWEEP_SCRIPT = String.raw`
(function () {
  "use strict";
${CHART_HELPERS}
  var ROW = 22;

  function curve() {
    var all = [];
    data.series.forEach(function (s) { all = all.concat(s.points); });
    if (all.length === 0) return;
    var bound = function (axis) {
      return data.limits.filter(function (l) { return l.axis === axis; })
        .map(function (l) { return l.value; });
    };
    var f = frame("curve", { title: "Throughput vs " + data.latencyLabel,
      x: [0, max(all.map(function (p) { return p.throughput; }).concat(bound("throughput"))) * 1.05],
      y: [0, max(all.map(function (p) { return p.latencyMs; }).concat(bound("latency"))) * 1.1],
      xTitle: "Throughput (infer/sec)", yTitle: data.latencyLabel + " (ms)" });
    data.limits.forEach(function (l) { limitLine(f, l, l.axis !== "latency"); });
    data.series.forEach(function (s, i) {
      line(f.svg, s.points.map(function (p) { return [f.x(p.throughput), f.y(p.latencyMs)]; }),
        color(i));
      s.points.forEach(function (p) {
        var cx = f.x(p.throughput), cy = f.y(p.latencyMs);
        searchMark(f, p, i, [cx, cy], s.label + ", " + p.load + ": " + fmt(p.throughput) +
          " infer/sec, " + fmt(p.latencyMs) + " ms; " + p.status);
        el("text", { x: cx + 8, y: cy - 8 }, f.svg, p.label + (p.best ? " best" : ""));
      });
    });
    legend("curve", data.series.map(function (s, i) { return { label: s.label, color: color(i) }; }));
  }

  function components() {
    var rows = data.rows;
    if (rows.length === 0) return;
    var longest = max(rows.map(function (r) { return r.label.length + (r.best ? 7 : 0); }));
    // Labels are 11-12px system-ui: about 7px a character.
    var left = Math.min(400, Math.max(M.l, 24 + longest * 7));
    var f = frame("components", { title: "Latency components",
      height: M.t + M.b + rows.length * ROW, left: left, xGrid: true, yTicks: [],
      x: [0, max(rows.map(function (r) {
        return r.segments.reduce(function (a, s) { return a + s.ms; }, 0);
      })) * 1.05],
      y: [0, rows.length], xTitle: "Average latency (ms)" });
    rows.forEach(function (r, i) {
      var top = f.y(rows.length - i) + 3, height = ROW - 6;
      var bar = el("g", { "data-bar": "", "data-row": i }, f.svg);
      if (r.best) bar.setAttribute("data-best", "");
      var base = 0;
      r.segments.forEach(function (s) {
        var rect = el("rect", { x: f.x(base), y: top, height: height,
          width: Math.max(0, f.x(base + s.ms) - f.x(base)),
          fill: color(data.componentNames.indexOf(s.name)), "data-segment": s.name }, bar);
        el("title", {}, rect, r.label + ": " + s.name + " " + fmt(s.ms) + " ms");
        base += s.ms;
      });
      el("text", { x: left - 6, y: top + height / 2 + 4, "text-anchor": "end",
        "class": r.best ? "title" : "label" }, f.svg, r.label + (r.best ? " (best)" : ""));
    });
    legend("components", data.componentsShown.map(function (name) {
      return { label: name, color: color(data.componentNames.indexOf(name)) };
    }));
  }

  render(function () {
    curve();
    components();
  });
})();
`;
