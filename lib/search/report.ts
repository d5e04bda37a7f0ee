/**
 * What a search reports, as Model Analyzer does: results/metrics-model-inference.csv
 * (its default columns, each model's points best first),
 * results/metrics-server-only.csv (the server's memory per variant, local
 * mode), and a text summary: the best configurations of each model and why
 * the best one won.
 */
import { csvText } from "../report/csv.ts";
import { formatGeneral } from "../report/format.ts";
import { constraintText, describeLoad, formatMetric, type PointRecord } from "../sweep/mod.ts";
import { describeObjectives, rankPoints } from "./objectives.ts";
import type { SearchOutcome } from "./run.ts";
import type { VariantOutcome } from "./walks.ts";
import type { SearchModel } from "./config.ts";
import { inferenceTable, instanceGroupText, serverTable } from "./fields.ts";
import type { SearchVariant } from "./server.ts";
import type { Variant } from "./variants.ts";
import type { ModelConfig } from "../protocol/model_config.ts";

export interface RankedPoint<V extends SearchVariant = Variant> {
  variant: VariantOutcome<V>;
  record: PointRecord;
  /** Why it does not satisfy the constraints (empty when it does). */
  reasons: string[];
}

/** Every point of a model, best first under its objectives; those breaking constraints last. */
export function rankModel<V extends SearchVariant = Variant>(
  model: SearchModel,
  variants: readonly VariantOutcome<V>[],
): RankedPoint<V>[] {
  const points = variants.flatMap((variant) =>
    variant.records.map((record) => ({ variant, record }))
  );
  return rankPoints(points, {
    goals: model.goals,
    objectives: model.objectives,
    result: (p) => p.record.result,
  }).map(({ item, reasons }) => ({ ...item, reasons }));
}

/** Each variant once, by its best point, best first; variants with no good point are left out. */
export function rankConfigs<V extends SearchVariant>(
  ranked: readonly RankedPoint<V>[],
): RankedPoint<V>[] {
  const seen = new Set<string>();
  return ranked.filter((p) => {
    if (p.reasons.length > 0 || seen.has(p.variant.variant.name)) return false;
    seen.add(p.variant.variant.name);
    return true;
  });
}

/** metrics-model-inference.csv: Model Analyzer's columns (`fields`), each model's points best first. */
export function formatInferenceCsv(outcome: SearchOutcome, fields: readonly string[]): string {
  const rows = outcome.models.flatMap(({ model, variants }) =>
    rankModel(model, variants).map((p) => ({
      model: model.name,
      variant: p.variant.variant.name,
      config: p.variant.variant.config,
      record: p.record,
      satisfies: p.reasons.length === 0,
      // A BLS model's rows are its own settings (an ensemble has none but its steps').
      ...(p.variant.variant.composing && !p.variant.variant.bls
        ? { composing: p.variant.variant.composing.map((c) => c.config) }
        : {}),
    }))
  );
  return csvText(inferenceTable(fields, rows));
}

/** metrics-server-only.csv: the server's resident memory, the most any point of a variant saw. */
export function formatServerCsv(outcome: SearchOutcome, fields: readonly string[]): string {
  const rows = outcome.models.flatMap(({ model, variants }) =>
    variants.flatMap((v) => {
      const ram = v.records.map((r) => r.result.serverRamMb).filter((n) => n !== undefined);
      return ram.length === 0
        ? []
        : [{ model: model.name, variant: v.variant.name, ramMb: Math.max(...ram as number[]) }];
    })
  );
  return csvText(serverTable(fields, rows));
}

/** `2:CPU instance(s), max batch size 4, dynamic batching` */
function settingsText(c: ModelConfig): string {
  const batching = c.dynamic_batching !== undefined ? ", dynamic batching" : "";
  return `${instanceGroupText(c)} instance(s), max batch size ${c.max_batch_size ?? 0}${batching}`;
}

function describeConfig(p: RankedPoint): string {
  const { name, config, composing, bls } = p.variant.variant;
  const members = composing?.map((c) => `${c.name} (${settingsText(c.config)})`);
  // An ensemble's settings are its composing models'; a BLS model's its own, then theirs.
  if (bls) {
    return `${name}: ${
      settingsText(config)
    }. Which is comprised of the following composing models: ${members!.join(", ")}`;
  }
  return members ? `${name}: ${members.join(" + ")}` : `${name}: ${settingsText(config)}`;
}

function describePoint(p: RankedPoint): string {
  const r = p.record.result;
  const p99 = r.client.percentilesUs.get(99);
  const ram = r.serverRamMb === undefined
    ? ""
    : `, server RAM ${formatGeneral(Math.round(r.serverRamMb))} MB`;
  return `${describeLoad(p.record.point)}: ${
    formatGeneral(Number(r.client.throughput.toFixed(1)))
  } infer/sec, p99 latency ${p99 === undefined ? "-" : (p99 / 1000).toFixed(1)} ms${ram}`;
}

/** Model Analyzer's name of the report across models (num_top_model_configs). */
export const ACROSS_MODELS = "Best Configs Across All Models";

/**
 * num_top_model_configs: every model's configurations as one model ranked
 * under the search's own objectives and constraints (not a model's), for a
 * summary and a page of the best across models; undefined when not asked.
 */
export function acrossModels(
  outcome: SearchOutcome,
  options: { count: number; across: Pick<SearchModel, "goals" | "objectives"> },
): SearchOutcome["models"][number] | undefined {
  if (options.count <= 0 || outcome.models.length === 0) return undefined;
  return {
    model: { ...outcome.models[0]!.model, name: ACROSS_MODELS, ...options.across },
    variants: outcome.models.flatMap((m) => m.variants),
  };
}

/** `objectives: throughput; constraints: max-p99-latency=20` of a model's search. */
export function goalsSummary(model: SearchModel): string {
  return `objectives: ${describeObjectives(model.objectives)}; ${
    model.goals.constraints.length === 0
      ? "no constraints"
      : `constraints: ${model.goals.constraints.map(constraintText).join(", ")}`
  }`;
}

/** Whether a variant's best point meets the constraints, for the pages' tables. */
export function satisfiedText<V extends SearchVariant>(
  variant: VariantOutcome<V>,
  own: RankedPoint<V> | undefined,
): string {
  if (own === undefined) return variant.failure ? `not measured: ${variant.failure}` : "no point";
  return own.reasons.length === 0 ? "Yes" : `No: ${own.reasons.join("; ")}`;
}

/**
 * A search's closing summary: per model, the top variants (`describeConfig`,
 * then `describePoint` of its best point), why the best won, `extra` lines
 * about the best, and the variants that failed.
 */
export function formatRankedSummary<V extends SearchVariant>(
  outcome: SearchOutcome<V>,
  options: {
    numConfigs: number;
    /** `Model M: 7 configurations` */
    heading: (model: SearchModel, variants: number) => string;
    describeConfig: (p: RankedPoint<V>) => string;
    describePoint: (p: RankedPoint<V>) => string;
    extra?: (best: RankedPoint<V>) => string[];
  },
): string {
  const lines: string[] = [];
  for (const { model, variants } of outcome.models) {
    const configs = rankConfigs(rankModel(model, variants));
    const points = variants.reduce((n, v) => n + v.records.length, 0);
    lines.push(
      `${options.heading(model, variants.length)}, ${points} points measured; ${
        goalsSummary(model)
      }`,
    );
    if (configs.length === 0) {
      lines.push(
        "  Best: none; no point is stable, free of failed requests and within the constraints",
      );
    }
    configs.slice(0, options.numConfigs).forEach((p, i) => {
      lines.push(`  ${i === 0 ? "Best" : `#${i + 1}  `} ${options.describeConfig(p)}`);
      lines.push(`        at ${options.describePoint(p)}`);
    });
    const [best, second] = configs;
    if (best && second) {
      const [a, b] = [best.record.result, second.record.result];
      const why = model.objectives.map(({ metric }) => {
        const x = metric.value(a);
        const y = metric.value(b);
        return x === undefined || y === undefined
          ? ""
          : `${metric.label} ${formatMetric(metric, x)} against ${formatMetric(metric, y)}`;
      }).filter((s) => s !== "").join(", ");
      lines.push(`  Why: ${why} for the runner-up, within the constraints`);
    }
    if (best) lines.push(...options.extra?.(best) ?? []);
    for (const v of variants.filter((v) => v.failure)) {
      lines.push(`  Failed: ${v.variant.name}: ${v.failure}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** The closing summary: per model, the top configurations and why the best won. */
export function formatSearchSummary(
  outcome: SearchOutcome,
  options: { numConfigs: number },
): string {
  return formatRankedSummary(outcome, {
    numConfigs: options.numConfigs,
    heading: (model, variants) => `Model ${model.name}: ${variants} configurations`,
    describeConfig,
    describePoint,
  });
}
