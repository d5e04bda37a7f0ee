/**
 * A model's summary page (reports/summaries/<model>/result_summary.html), as
 * Model Analyzer's: the top configurations' throughput vs p99 latency curves
 * with the constraints drawn, the best one's config.pbtxt and why it won
 * (its objective scores against the runners-up, the constraints it met), and
 * every variant in a table. The chart is the sweep report's (same data shape,
 * same script), so the page is one self-contained file.
 */
import { chartSection, escapeHtml, htmlPage } from "../report/html_template.ts";
import { formatGeneral } from "../report/format.ts";
import {
  constraintText,
  describeLoad,
  formatMetric,
  SWEEP_SCRIPT,
  type SweepHtmlData,
} from "../sweep/mod.ts";
import { formatModelConfig } from "../protocol/model_config.ts";
import type { LevelResult } from "../types/results.ts";
import { compareResults, describeObjectives } from "./objectives.ts";
import { rankConfigs, type RankedPoint, rankModel, satisfiedText } from "./report.ts";
import { instanceGroupText } from "./fields.ts";
import type { SearchOutcome } from "./run.ts";
import type { VariantOutcome } from "./walks.ts";

export interface SearchHtmlContext {
  /** inferperf's version. */
  version: string;
  /** --num-configs-per-model. */
  numConfigs: number;
}

type ModelOutcome = SearchOutcome["models"][number];

const p99Ms = (r: LevelResult) => {
  const us = r.client.percentilesUs.get(99);
  return us === undefined ? undefined : us / 1000;
};
const num = (n: number) => formatGeneral(Number(n.toFixed(1)));
export const cell = (text: string, cls = "") => `<td${cls ? ` class="${cls}"` : ""}>${text}</td>`;
export const textCell = (text: string) => cell(escapeHtml(text), "text");
/** A table; a header given as `[text]` heads a text column (left-aligned, as its cells). */
export const table = (head: Array<string | [string]>, rows: string[]) =>
  `<div class="scroll"><table><thead><tr>${
    head.map((h) => typeof h === "string" ? `<th>${h}</th>` : `<th class="text">${h[0]}</th>`)
      .join("")
  }</tr></thead><tbody>${rows.join("")}</tbody></table></div>\n`;

function describePoint(p: RankedPoint): string {
  const r = p.record.result;
  const p99 = p99Ms(r);
  return `${describeLoad(p.record.point)}: ${num(r.client.throughput)} infer/sec, p99 ${
    p99 === undefined ? "–" : num(p99)
  } ms`;
}

function batchingText(v: VariantOutcome): string {
  const batching = v.variant.config.dynamic_batching;
  if (batching === undefined) return "off";
  const delay = batching.max_queue_delay_microseconds;
  return delay === undefined ? "on" : `on, max queue delay ${delay} µs`;
}

/** The curve of each top configuration over its concurrency sweep; the best point ringed. */
function chartData(model: ModelOutcome, top: RankedPoint[], ranked: RankedPoint[]): SweepHtmlData {
  const reasons = new Map(ranked.map((p) => [p.record, p.reasons]));
  const best = top[0]?.record;
  const series = top.map((t) => ({
    label: `${t.variant.variant.name} (${instanceGroupText(t.variant.variant.config)}, max batch ${
      t.variant.variant.config.max_batch_size ?? 0
    })`,
    points: t.variant.records.flatMap((record) => {
      const latencyMs = p99Ms(record.result);
      if (latencyMs === undefined) return [];
      const why = reasons.get(record) ?? [];
      return [{
        value: record.point.value,
        label: formatGeneral(record.point.value),
        load: describeLoad(record.point),
        throughput: record.result.client.throughput,
        latencyMs,
        best: record === best,
        candidate: why.length === 0,
        status: record === best ? "best" : why.length === 0 ? "candidate" : why.join("; "),
      }];
    }).sort((a, b) => a.value - b.value),
  }));
  const limits = model.model.goals.constraints.flatMap((c): SweepHtmlData["limits"] => {
    if (c.metric.name === "throughput") {
      return [{ axis: "throughput", value: c.limit, label: constraintText(c) }];
    }
    return c.metric.name === "p99-latency"
      ? [{ axis: "latency", value: c.limit, label: constraintText(c) }]
      : [];
  });
  return {
    latencyLabel: "p99 latency",
    series,
    limits,
    componentNames: [],
    componentsShown: [],
    rows: [],
  };
}

/** The best configuration against each runner-up: each objective's value, the weighted score. */
function whySection(model: ModelOutcome, top: RankedPoint[]): string {
  const best = top[0]!;
  const { objectives, goals } = model.model;
  const rows = top.map((p, i) => {
    const score = i === 0
      ? "–"
      : `${(compareResults(best.record.result, p.record.result, objectives) * 100).toFixed(1)} %`;
    return `<tr${i === 0 ? ' class="best"' : ""}>${
      [
        textCell(`${i === 0 ? "Best" : `#${i + 1}`} ${p.variant.variant.name}`),
        textCell(describePoint(p)),
        ...objectives.map(({ metric }) => {
          const v = metric.value(p.record.result);
          return cell(v === undefined ? "–" : escapeHtml(formatMetric(metric, v)));
        }),
        cell(score),
      ].join("")
    }</tr>`;
  });
  const met = goals.constraints.map((c) => {
    const v = c.metric.value(best.record.result);
    return `${constraintText(c)} (${v === undefined ? "not measured" : formatMetric(c.metric, v)})`;
  });
  return `<h2>Why ${escapeHtml(best.variant.variant.name)} won</h2>\n<p class="caption">` +
    `Objectives: ${escapeHtml(describeObjectives(objectives))}. The score is the best's weighted ` +
    `gain over each runner-up (Model Analyzer's comparison: each objective's difference relative ` +
    `to the mean of the two). ${
      met.length === 0
        ? "No constraints were set."
        : `Constraints met at its best point: ${escapeHtml(met.join(", "))}.`
    }</p>\n` +
    table(
      [
        ["Configuration"],
        ["Best point"],
        ...objectives.map((o) => escapeHtml(o.metric.label)),
        "Best's score against it",
      ],
      rows,
    );
}

/** Every variant: its settings, its best point and whether that point meets the constraints. */
function variantTable(model: ModelOutcome, ranked: RankedPoint[], bestName?: string): string {
  const rows = model.variants.map((v) => {
    const c = v.variant.config;
    const own = ranked.find((p) => p.variant === v);
    return `<tr${v.variant.name === bestName ? ' class="best"' : ""} data-variant="${
      escapeHtml(v.variant.name)
    }">${
      [
        textCell(v.variant.name),
        cell(escapeHtml(instanceGroupText(c))),
        cell(String(c.max_batch_size ?? 0)),
        textCell(batchingText(v)),
        cell(String(v.records.length)),
        textCell(own ? describePoint(own) : "–"),
        textCell(satisfiedText(v, own)),
      ].join("")
    }</tr>`;
  });
  return `<h2>Every configuration</h2>\n<p class="caption">Each variant's best point (the best ` +
    `within the constraints, else its best); the chosen configuration is highlighted.</p>\n` +
    table(
      [
        ["Configuration"],
        "Instance group",
        "Max batch size",
        ["Dynamic batching"],
        "Points",
        ["Best point"],
        ["Satisfies constraints"],
      ],
      rows,
    );
}

/** The complete summary page of one model's search. */
export function renderSearchHtml(model: ModelOutcome, context: SearchHtmlContext): string {
  const ranked = rankModel(model.model, model.variants);
  const top = rankConfigs(ranked).slice(0, context.numConfigs);
  const { goals, objectives, name } = model.model;
  const points = model.variants.reduce((n, v) => n + v.records.length, 0);
  const meta = `inferperf ${context.version} · ${model.variants.length} configurations, ` +
    `${points} points · objectives: ${describeObjectives(objectives)} · ${
      goals.constraints.length === 0
        ? "no constraints"
        : `constraints: ${goals.constraints.map(constraintText).join(", ")}`
    }`;
  const best = top[0];
  const body = [
    `<div class="meta">${escapeHtml(meta)}</div>\n`,
    best
      ? `<h2>Top ${top.length} configurations</h2>\n<ol>${
        top.map((p) =>
          `<li data-top="${escapeHtml(p.variant.variant.name)}"><strong>${
            escapeHtml(p.variant.variant.name)
          }</strong>: ${escapeHtml(describePoint(p))}</li>`
        ).join("")
      }</ol>\n` +
        chartSection(
          "curve",
          "Throughput vs p99 latency",
          "One line per top configuration over its load sweep, each point labelled with " +
            "its load. Filled: within the constraints; hollow: not; ringed: the best. " +
            "Dashed: the constraints on these axes.",
        ) + whySection(model, top) +
        `<h2>Best configuration: ${escapeHtml(best.variant.variant.name)}</h2>\n` +
        `<p class="caption">Its config.pbtxt, as written to the output model repository.</p>\n` +
        `<pre data-best-config>${
          escapeHtml(formatModelConfig(best.variant.variant.config))
        }</pre>\n`
      : '<p class="note">No configuration has a point that is stable, free of failed requests ' +
        "and within the constraints: there is no best.</p>\n",
    variantTable(model, ranked, best?.variant.variant.name),
  ].join("");
  return htmlPage(`inferperf model config search: ${name}`, body, {
    data: chartData(model, top, ranked),
    script: SWEEP_SCRIPT,
  });
}
