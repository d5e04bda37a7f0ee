/**
 * The script of an engine search's summary page (engine_html.ts): the
 * Pareto front of tokens/s per user against tokens/s in all, and TTFT and
 * ITL against load per variant, as inline SVG. Marks carry data-point,
 * data-front, data-limit and data-best for tests.
 */
import { CHART_HELPERS } from "../report/html_template.ts";

export const ENGINE_SCRIPT = String.raw`
(function () {
  "use strict";
${CHART_HELPERS}
  var FRONT = "#1d2733";

  function all() {
    var out = [];
    data.series.forEach(function (s) { out = out.concat(s.points); });
    return out;
  }
  function limitsOn(axis) { return data.limits.filter(function (l) { return l.axis === axis; }); }

  function pareto() {
    var points = all().filter(function (p) { return p.perUser !== null && p.total !== null; });
    if (points.length === 0) return;
    var xs = points.map(function (p) { return p.perUser; });
    var ys = points.map(function (p) { return p.total; });
    var f = frame("pareto", { title: "Tokens/s in all vs tokens/s per user",
      x: [0, max(xs.concat(limitsOn("perUser").map(function (l) { return l.value; }))) * 1.08],
      y: [0, max(ys.concat(limitsOn("total").map(function (l) { return l.value; }))) * 1.1],
      xTitle: "Output tokens/s per user (p50)", yTitle: "Output tokens/s in all" });
    limitsOn("perUser").forEach(function (l) { limitLine(f, l, true); });
    limitsOn("total").forEach(function (l) { limitLine(f, l, false); });
    if (data.front.length > 0) {
      var front = el("polyline", { points: data.front.map(function (p) {
        return f.x(p[0]) + "," + f.y(p[1]); }).join(" "),
        fill: "none", stroke: FRONT, "stroke-width": 1.5, "data-front": "" }, f.svg);
      el("title", {}, front, "Pareto front");
    }
    data.series.forEach(function (s, i) {
      s.points.forEach(function (p) {
        if (p.perUser === null || p.total === null) return;
        var cx = f.x(p.perUser), cy = f.y(p.total);
        searchMark(f, p, i, [cx, cy], s.label + ", " + p.load + ": " + fmt(p.total) +
          " tokens/s, " + fmt(p.perUser) + " tokens/s per user; " + p.status);
        el("text", { x: cx + 8, y: cy - 8 }, f.svg, p.tag + (p.best ? " best" : ""));
      });
    });
    legend("pareto", data.series.map(function (s, i) { return { label: s.label, color: color(i) }; }));
  }

  function versusLoad(name, key, axis, title) {
    var points = all().filter(function (p) { return p[key] !== null; });
    if (points.length === 0) return;
    var f = frame(name, { title: title + " vs load",
      x: [0, max(points.map(function (p) { return p.value; })) * 1.05],
      y: [0, max(points.map(function (p) { return p[key]; })
        .concat(limitsOn(axis).map(function (l) { return l.value; }))) * 1.1],
      xTitle: data.loadLabel, yTitle: title + " (ms)" });
    limitsOn(axis).forEach(function (l) { limitLine(f, l, false); });
    data.series.forEach(function (s, i) {
      var shown = s.points.filter(function (p) { return p[key] !== null; });
      line(f.svg, shown.map(function (p) { return [f.x(p.value), f.y(p[key])]; }), color(i));
      shown.forEach(function (p) {
        searchMark(f, p, i, [f.x(p.value), f.y(p[key])],
          s.label + ", " + p.load + ": " + fmt(p[key]) + " ms; " + p.status);
      });
    });
    legend(name, data.series.map(function (s, i) { return { label: s.label, color: color(i) }; }));
  }

  render(function () {
    pareto();
    versusLoad("ttft", "ttftMs", "ttft", data.ttftLabel);
    versusLoad("itl", "itlMs", "itl", data.itlLabel);
  });
})();
`;
