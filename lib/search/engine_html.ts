/**
 * An engine search's summary page
 * (reports/summaries/<model>/result_summary.html), one self-contained file:
 * the Pareto front of output tokens/s per user against tokens/s in all
 * (every point, the front of those within the constraints drawn, the
 * constraints on those axes dashed, the best ringed), TTFT and ITL against
 * load per variant with their constraints dashed, the best variant's
 * command line, why it won, and a table of every variant.
 */
import { chartSection, escapeHtml, htmlPage } from "../report/html_template.ts";
import { constraintText, describeLoad, type Metric, parseMetric } from "../sweep/mod.ts";
import { ENGINE_SCRIPT } from "./_engine_html_script.ts";
import { describeEnginePoint, type EngineOutcome, loadOf, perUserP50 } from "./engine_report.ts";
import { goalsSummary, rankConfigs, type RankedPoint, rankModel, satisfiedText } from "./report.ts";
import type { EngineVariant } from "./engine_variants.ts";

type ModelOutcome = EngineOutcome["models"][number];
type Ranked = RankedPoint<EngineVariant>;

export interface EngineHtmlContext {
  version: string;
  numConfigs: number;
  /** Each variant's command line (local mode). */
  commands: ReadonlyMap<string, string>;
}

const TOTAL = parseMetric("output_token_throughput")!;
const PER_USER = parseMetric("output_token_throughput_per_user_avg")!;
/** The chart's x axis: the median per user (engine_report.ts says why). */
const PER_USER_P50: Metric = { ...PER_USER, value: perUserP50 };

/** The TTFT and ITL the charts show: a constraint's statistic, else p90 TTFT and average ITL. */
function latencyMetric(model: ModelOutcome, figure: string, fallback: string): Metric {
  return model.model.goals.constraints.find((c) => c.metric.def.name === figure)?.metric ??
    parseMetric(fallback)!;
}

/** Output tokens/s per user and in all of every point in `points`, the non-dominated ones. */
export function paretoFront(points: ReadonlyArray<[number, number]>): Array<[number, number]> {
  const sorted = [...points].sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  const front: Array<[number, number]> = [];
  for (const p of sorted) if (front.length === 0 || p[1] > front.at(-1)![1]) front.push(p);
  return front.reverse();
}

function chartData(model: ModelOutcome, ranked: Ranked[], best?: Ranked) {
  const ttft = latencyMetric(model, "time_to_first_token", "time_to_first_token_p90");
  const itl = latencyMetric(model, "inter_token_latency", "inter_token_latency_avg");
  const reasons = new Map(ranked.map((p) => [p.record, p.reasons]));
  const value = (m: Metric, p: Ranked["record"]) => m.value(p.result) ?? null;
  const series = model.variants.map((v) => ({
    label: v.variant.name,
    points: [...v.records].sort((a, b) => loadOf(a).value - loadOf(b).value).map((record) => {
      const why = reasons.get(record) ?? [];
      return {
        value: loadOf(record).value,
        tag: String(loadOf(record).value),
        load: describeLoad(loadOf(record)),
        total: value(TOTAL, record),
        perUser: value(PER_USER_P50, record),
        ttftMs: value(ttft, record),
        itlMs: value(itl, record),
        best: record === best?.record,
        candidate: why.length === 0,
        status: record === best?.record ? "best" : why.length === 0 ? "candidate" : why.join("; "),
      };
    }),
  }));
  const good = series.flatMap((s) => s.points.filter((p) => p.candidate));
  const front = paretoFront(
    (good.length > 0 ? good : series.flatMap((s) => s.points))
      .filter((p) => p.perUser !== null && p.total !== null)
      .map((p) => [p.perUser!, p.total!]),
  );
  const limits = model.model.goals.constraints.flatMap((c) => {
    const same = (m: Metric) =>
      c.metric.def.name === m.def.name && c.metric.statistic === m.statistic;
    const axis = same(TOTAL)
      ? "total"
      : c.metric.def.name === PER_USER.def.name
      ? "perUser"
      : same(ttft)
      ? "ttft"
      : same(itl)
      ? "itl"
      : undefined;
    return axis ? [{ axis, value: c.limit, label: constraintText(c) }] : [];
  });
  const first = model.variants.flatMap((v) => v.records)[0];
  return {
    series,
    front,
    limits,
    ttftLabel: ttft.label,
    itlLabel: itl.label,
    loadLabel: first?.point.mode === "request_rate" ? "Request rate (req/sec)" : "Concurrency",
  };
}

const cell = (text: string, cls = "") => `<td${cls ? ` class="${cls}"` : ""}>${text}</td>`;
const textCell = (text: string) => cell(escapeHtml(text), "text");
const table = (head: string[], rows: string[]) =>
  `<div class="scroll"><table><thead><tr>${
    head.map((h) => `<th class="text">${escapeHtml(h)}</th>`).join("")
  }</tr></thead><tbody>${rows.join("")}</tbody></table></div>\n`;

/** Every variant: its parameters, its best point, whether it meets the constraints. */
function variantTable(model: ModelOutcome, ranked: Ranked[], context: EngineHtmlContext) {
  const names = [...new Set(model.variants.flatMap((v) => Object.keys(v.variant.parameters)))];
  const bestName = rankConfigs(ranked)[0]?.variant.variant.name;
  const rows = model.variants.map((v) => {
    const own = ranked.find((p) => p.variant === v);
    return `<tr${v.variant.name === bestName ? ' class="best"' : ""} data-variant="${
      escapeHtml(v.variant.name)
    }">${
      [
        textCell(v.variant.name),
        ...names.map((k) => textCell(String(v.variant.parameters[k] ?? ""))),
        cell(String(v.records.length)),
        textCell(own ? describeEnginePoint(own) : "–"),
        textCell(satisfiedText(v, own)),
        textCell(context.commands.get(v.variant.name) ?? ""),
      ].join("")
    }</tr>`;
  });
  return `<h2>Every variant</h2>\n<p class="caption">Each variant's best point (the best within ` +
    `the constraints, else its best); the chosen one is highlighted.</p>\n` +
    table(
      ["Variant", ...names, "Points", "Best point", "Satisfies constraints", "Command line"],
      rows,
    );
}

/** The complete summary page of an engine search. */
export function renderEngineHtml(model: ModelOutcome, context: EngineHtmlContext): string {
  const ranked = rankModel(model.model, model.variants);
  const top = rankConfigs(ranked).slice(0, context.numConfigs);
  const best = top[0];
  const { name } = model.model;
  const points = model.variants.reduce((n, v) => n + v.records.length, 0);
  const meta = `inferperf ${context.version} · ${model.variants.length} variants, ${points} ` +
    `points · ${goalsSummary(model.model).replace("; ", " · ")}`;
  const command = best && context.commands.get(best.variant.variant.name);
  const body = [
    `<div class="meta">${escapeHtml(meta)}</div>\n`,
    best
      ? `<h2>Best variant: ${escapeHtml(best.variant.variant.name)}</h2>\n<p class="caption">${
        escapeHtml(describeEnginePoint(best))
      }.</p>\n${command ? `<pre data-best-command>${escapeHtml(command)}</pre>\n` : ""}<ol>${
        top.map((p) =>
          `<li data-top="${escapeHtml(p.variant.variant.name)}"><strong>${
            escapeHtml(p.variant.variant.name)
          }</strong>: ${escapeHtml(describeEnginePoint(p))}</li>`
        ).join("")
      }</ol>\n`
      : '<p class="note">No variant has a point that is stable, free of failed requests and ' +
        "within the constraints: there is no best.</p>\n",
    chartSection(
      "pareto",
      "Pareto front: tokens/s per user vs tokens/s in all",
      "Every point of every variant, labelled with its load. Filled: within the constraints; " +
        "hollow: not; ringed: the best. The line is the Pareto front of the points within the " +
        "constraints (of all points when none is); dashed: constraints on these axes.",
    ),
    chartSection(
      "ttft",
      "Time to first token vs load",
      "One line per variant; dashed: a constraint on this statistic.",
    ),
    chartSection(
      "itl",
      "Inter-token latency vs load",
      "One line per variant; dashed: a constraint on this statistic.",
    ),
    variantTable(model, ranked, context),
  ].join("");
  return htmlPage(`inferperf engine search: ${name}`, body, {
    data: chartData(model, ranked, best),
    script: ENGINE_SCRIPT,
  });
}
