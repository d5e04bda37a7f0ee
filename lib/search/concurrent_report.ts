/**
 * What a concurrent multi-model search reports, as Model Analyzer's reports
 * of a multi-model run: the best combinations with each model's
 * configuration, load and figures; metrics-model-inference.csv with a row
 * per model of every combination's points (the Combination column names the
 * configurations measured together), best first; the summary page of the
 * models together (reports/summaries/a,b) with each combination's total
 * throughput and average p99 latency, the models' own values parenthetical;
 * and a combination's detailed report of every point.
 */
import { csvText } from "../report/csv.ts";
import { formatGeneral } from "../report/format.ts";
import { chartSection, escapeHtml, htmlPage } from "../report/html_template.ts";
import { formatModelConfig } from "../protocol/model_config.ts";
import { UsageError } from "../types/errors.ts";
import {
  constraintText,
  describeLoad,
  judge,
  type PointRecord,
  SWEEP_SCRIPT,
  type SweepHtmlData,
} from "../sweep/mod.ts";
import {
  bestCombinationPoint,
  type Combination,
  type CombinationOutcome,
  type CombinationPoint,
  compareCombined,
  type ConcurrentOutcome,
  isCandidate,
  rankCombinations,
} from "./concurrent.ts";
import { inferenceTable, instanceGroupText } from "./fields.ts";
import { cell, type SearchHtmlContext, table, textCell } from "./html.ts";
import { describeObjectives } from "./objectives.ts";
import type { SearchModel } from "./config.ts";

const p99Of = (r: PointRecord) => {
  const us = r.result.client.percentilesUs.get(99);
  return us === undefined ? undefined : us / 1000;
};
const num = (n: number | undefined) => n === undefined ? "-" : formatGeneral(Number(n.toFixed(1)));

/** `delay_config_1 at concurrency 4 + fast_config_1 at concurrency 8` */
export function describeCombinationPoint(point: CombinationPoint, c: Combination): string {
  return point.parts.map((part, i) => `${c.members[i]!.name} at ${describeLoad(part.point)}`).join(
    " + ",
  );
}

/** `  delay: delay_config_1 (2:CPU, max batch 4) at concurrency 4: 391.2 infer/sec, p99 20.1 ms` per model. */
function partLines(point: CombinationPoint, c: CombinationOutcome, models: readonly SearchModel[]) {
  return point.parts.map((part, i) => {
    const v = c.combination.members[i]!;
    return `        ${models[i]!.name}: ${v.name} (${instanceGroupText(v.config)}, max batch ${
      v.config.max_batch_size ?? 0
    }) at ${describeLoad(part.point)}: ${num(part.result.client.throughput)} infer/sec, p99 ${
      num(p99Of(part))
    } ms`;
  });
}

const pointCount = (outcome: ConcurrentOutcome) =>
  outcome.combinations.reduce((n, c) => n + c.points.length, 0);

/** The closing summary of a concurrent search: the top combinations, each model's part of each. */
export function formatConcurrentSummary(
  outcome: ConcurrentOutcome,
  options: { numConfigs: number },
): string {
  const { models } = outcome;
  const lines = [
    `Models ${
      models.map((m) => m.name).join(", ")
    } measured together: ${outcome.combinations.length} combinations, ${
      pointCount(outcome)
    } points; weighting ${
      models.map((m) => `${m.name} ${m.weighting ?? 1}`).join(", ")
    }; objectives ${
      models.map((m) => `${m.name}: ${describeObjectives(m.objectives)}`).join(", ")
    }`,
  ];
  const ranked = rankCombinations(outcome.combinations, models);
  if (ranked.length === 0) {
    lines.push(
      "  Best: none; no combination has a point where every model is stable, free of failed requests and within its constraints",
    );
  }
  ranked.slice(0, options.numConfigs).forEach(({ outcome: c, best }, i) => {
    lines.push(`  ${i === 0 ? "Best" : `#${i + 1}  `} ${c.combination.name}:`);
    lines.push(...partLines(best, c, models));
  });
  for (const c of outcome.combinations.filter((c) => c.failure)) {
    lines.push(`  Failed: ${c.combination.name}: ${c.failure}`);
  }
  return lines.join("\n") + "\n";
}

/** Default columns of a concurrent search: Model Analyzer's, and the combination. */
export function concurrentFields(fields: readonly string[]): string[] {
  if (fields.includes("combination")) return [...fields];
  const at = fields.indexOf("model_config_path");
  return at < 0
    ? [...fields, "combination"]
    : [...fields.slice(0, at + 1), "combination", ...fields.slice(at + 1)];
}

/** The combinations best first (those without a candidate point last), each its points best first. */
function ordered(outcome: ConcurrentOutcome) {
  const { models } = outcome;
  const ranked = rankCombinations(outcome.combinations, models);
  return [
    ...ranked.map((r) => r.outcome),
    ...outcome.combinations.filter((c) => !ranked.some((r) => r.outcome === c)),
  ].map((c) => {
    const good = c.points.filter((p) => isCandidate(p, models))
      .sort((x, y) => -compareCombined(x, y, models));
    return { c, points: [...good, ...c.points.filter((p) => !good.includes(p))] };
  });
}

const satisfies = (part: PointRecord, model: SearchModel) =>
  judge([part], { ...model, result: (r) => r.result, group: () => "" })[0]!.reasons.length === 0;

/** metrics-model-inference.csv of a concurrent search: combinations best first, a row per model. */
export function formatConcurrentCsv(outcome: ConcurrentOutcome, fields: readonly string[]): string {
  const { models } = outcome;
  const rows = ordered(outcome).flatMap(({ c, points }) =>
    points.flatMap((point) =>
      point.parts.map((part, i) => ({
        model: models[i]!.name,
        variant: c.combination.members[i]!.name,
        config: c.combination.members[i]!.config,
        record: part,
        satisfies: satisfies(part, models[i]!),
        combination: c.combination.name,
      }))
    )
  );
  return csvText(inferenceTable(concurrentFields(fields), rows));
}

/** Model Analyzer's figures of a multi-model point: the total throughput and the mean p99. */
function figures(point: CombinationPoint) {
  const p99s = point.parts.map(p99Of).filter((v) => v !== undefined);
  return {
    throughput: point.parts.reduce((n, r) => n + r.result.client.throughput, 0),
    p99: p99s.length === 0 ? undefined : p99s.reduce((a, b) => a + b, 0) / p99s.length,
  };
}

/** `<strong>total</strong> (a, b)`, as Model Analyzer writes a multi-model figure. */
const joint = (total: number | undefined, each: Array<number | undefined>) =>
  `<strong>${num(total)}</strong> (${each.map(num).join(", ")})`;

/** Model Analyzer's parenthetical list of the models' values. */
const perModel = (values: string[]) => `(${values.join(", ")})`;

/** The summary page's key and title: `a,b`, as Model Analyzer names a multi-model report. */
export const concurrentReportKey = (outcome: ConcurrentOutcome) =>
  outcome.models.map((m) => m.name).join(",");

/** The summary page of a concurrent search (reports/summaries/a,b/result_summary.html). */
export function renderConcurrentHtml(
  outcome: ConcurrentOutcome,
  context: SearchHtmlContext,
): string {
  const { models } = outcome;
  const ranked = rankCombinations(outcome.combinations, models);
  const top = ranked.slice(0, context.numConfigs);
  const best = top[0];
  const own = outcome.combinations.find((c) =>
    c.combination.members.every((v) => v.name.endsWith("_config_default"))
  );
  const ownBest = own && bestCombinationPoint(own, models);
  const gain = best && ownBest ? Math.round(compareCombined(best.best, ownBest, models) * 100) : 0;
  const constraints = models.filter((m) => m.goals.constraints.length > 0).map((m) =>
    `${m.name}: ${m.goals.constraints.map(constraintText).join(", ")}`
  );
  const meta = `inferperf ${context.version} · Model: ${
    models.map((m) => m.name).join(" and ")
  } · ${outcome.combinations.length} combinations, ${pointCount(outcome)} points · weighting ${
    models.map((m) => `${m.name} ${m.weighting ?? 1}`).join(", ")
  } · objectives ${
    models.map((m) => `${m.name}: ${describeObjectives(m.objectives)}`).join(", ")
  } · constraint targets: ${constraints.join("; ") || "none"}`;
  const sentence = best
    ? `In ${
      pointCount(outcome)
    } measurements across ${outcome.combinations.length} configurations, the combination of ${
      best.outcome.combination.members.map((v) => `<strong>${escapeHtml(v.name)}</strong>`).join(
        " and ",
      )
    } ${
      gain > 0
        ? `is <strong>${gain}%</strong> better than the default configuration at meeting the objectives`
        : "provides no gain over the default configuration"
    }, under the given constraints.`
    : "No combination has a point where every model is stable, free of failed requests and within its constraints: there is no best.";
  const rows = ranked.map(({ outcome: c, best: point }, i) => {
    const f = figures(point);
    const ram = point.parts.map((p) => p.result.serverRamMb).filter((v) => v !== undefined);
    return `<tr${i === 0 ? ' class="best"' : ""} data-combination="${
      escapeHtml(c.combination.name)
    }">${
      [
        textCell(c.combination.members.map((v) => v.name).join(", ")),
        textCell(describeCombinationPoint(point, c.combination)),
        cell(perModel(c.combination.members.map((v) => String(v.config.max_batch_size ?? 0)))),
        cell(
          perModel(c.combination.members.map((v) =>
            v.config.dynamic_batching === undefined ? "Disabled" : "Enabled"
          )),
        ),
        cell(escapeHtml(
          c.combination.members.map((v) =>
            instanceGroupText(v.config)
          ).join(", "),
        )),
        cell(joint(f.p99, point.parts.map(p99Of))),
        cell(joint(f.throughput, point.parts.map((p) => p.result.client.throughput))),
        cell(ram.length === 0 ? "-" : num(Math.max(...ram))),
      ].join("")
    }</tr>`;
  });
  const data: SweepHtmlData = {
    latencyLabel: "average p99 latency",
    series: top.map(({ outcome: c, best: point }) => ({
      label: c.combination.name,
      points: c.points.flatMap((p, i) => {
        const f = figures(p);
        if (f.p99 === undefined) return [];
        const candidate = isCandidate(p, models);
        return [{
          value: i,
          label: p.parts.map((r) => formatGeneral(r.point.value)).join("+"),
          load: describeCombinationPoint(p, c.combination),
          throughput: f.throughput,
          latencyMs: f.p99,
          best: p === point && c === best!.outcome,
          candidate,
          status: candidate ? "candidate" : "not within the constraints",
        }];
      }),
    })),
    limits: [],
    componentNames: [],
    componentsShown: [],
    rows: [],
  };
  const body = [
    `<div class="meta">${escapeHtml(meta)}</div>\n`,
    `<p>${sentence}</p>\n`,
    best
      ? chartSection(
        "curve",
        "Total throughput vs average p99 latency",
        "One line per top combination over its points, each labelled with the models' loads " +
          "(in the models' order). Filled: every model within its constraints; ringed: the best.",
      )
      : "",
    `<h2>Report Table</h2>\n<p class="caption">The following table summarizes each configuration ` +
    `at the measurement that optimizes the desired metrics under the given constraints. Per model ` +
    `values are parenthetical.</p>\n`,
    table(
      [
        ["Model Config Name"],
        ["Loads"],
        "Max Batch Size",
        "Dynamic Batching",
        "Total Instance Count",
        "Average p99 Latency (ms)",
        "Total Throughput (infer/sec)",
        "Max CPU Memory Usage (MB)",
      ],
      rows,
    ),
    ...(best?.outcome.combination.members ?? []).map((v) =>
      `<h2>Best configuration of ${escapeHtml(v.model)}: ${escapeHtml(v.name)}</h2>\n` +
      `<pre data-best-config>${escapeHtml(formatModelConfig(v.config))}</pre>\n`
    ),
  ].join("");
  return htmlPage(
    `inferperf model config search: ${models.map((m) => m.name).join(" and ")}`,
    body,
    {
      data,
      script: SWEEP_SCRIPT,
    },
  );
}

/** The combinations `names` asks for (`a_config_1+b_config_0`); unknown names are a UsageError. */
export function findCombinations(
  outcome: ConcurrentOutcome,
  names: readonly string[],
): CombinationOutcome[] {
  const known = (n: string) => outcome.combinations.find((c) => c.combination.name === n);
  const unknown = names.filter((n) => !known(n));
  if (unknown.length > 0) {
    throw new UsageError([
      `Unknown combination${unknown.length > 1 ? "s" : ""} ${
        unknown.join(", ")
      } for --report-model-configs: the checkpoint has ${
        outcome.combinations.map((c) => c.combination.name).join(", ") || "none"
      }`,
    ]);
  }
  return names.map((n) => known(n)!);
}

/** A combination's detailed report: every point with each model's load and figures, each configuration. */
export function renderCombinationHtml(
  outcome: ConcurrentOutcome,
  options: { combination: CombinationOutcome; version: string },
): string {
  const { models } = outcome;
  const c = options.combination;
  const points = ordered(outcome).find((o) => o.c === c)!.points;
  const rows = points.map((point) => {
    const f = figures(point);
    const cells = [
      ...point.parts.flatMap((part) => {
        const s = part.result.server?.[0];
        return [
          textCell(describeLoad(part.point)),
          cell(num(part.result.client.throughput)),
          cell(num(p99Of(part))),
          cell(num(part.result.client.avgLatencyUs / 1000)),
          cell(num(s === undefined ? undefined : s.queueUs / 1000)),
          cell(num(s === undefined ? undefined : s.computeInferUs / 1000)),
        ];
      }),
      cell(num(f.throughput)),
      cell(num(f.p99)),
      textCell(point.parts.every((p) => p.result.stable) ? "yes" : "no"),
      textCell(isCandidate(point, models) ? "Yes" : "No"),
    ];
    return `<tr>${cells.join("")}</tr>`;
  });
  const head = [
    ...models.flatMap((m) => [
      [`${escapeHtml(m.name)} load`] as [string],
      `${escapeHtml(m.name)} throughput (infer/sec)`,
      `${escapeHtml(m.name)} p99 (ms)`,
      `${escapeHtml(m.name)} avg latency (ms)`,
      `${escapeHtml(m.name)} server queue (ms)`,
      `${escapeHtml(m.name)} compute infer (ms)`,
    ]),
    "Total throughput (infer/sec)",
    "Average p99 (ms)",
    ["Stable"] as [string],
    ["Satisfies constraints"] as [string],
  ];
  const meta = `inferperf ${options.version} · ${models.map((m) => m.name).join(" and ")} · ${
    c.combination.members.map((v) =>
      `${v.name}: ${instanceGroupText(v.config)} instance(s), max batch size ${
        v.config.max_batch_size ?? 0
      }`
    ).join("; ")
  } · ${points.length} points`;
  const body = [
    `<div class="meta">${escapeHtml(meta)}</div>\n`,
    c.failure ? `<p class="note">${escapeHtml(c.failure)}</p>\n` : "",
    `<h2>Every point</h2>\n<p class="caption">Best first; each model at its own load.</p>\n`,
    table(head, rows),
    ...c.combination.members.map((v) =>
      `<h2>Configuration of ${escapeHtml(v.model)}: ${escapeHtml(v.name)}</h2>\n` +
      `<pre data-config>${escapeHtml(formatModelConfig(v.config))}</pre>\n`
    ),
  ].join("");
  return htmlPage(`Detailed report: ${c.combination.name}`, body, { data: {}, script: "" });
}
