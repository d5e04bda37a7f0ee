/**
 * What a concurrent multi-model search reports: the best combinations with
 * each model's configuration and figures, and metrics-model-inference.csv
 * with a row per model of every combination's points (the Combination
 * column names the configurations measured together), best first.
 */
import { csvText } from "../report/csv.ts";
import { formatGeneral } from "../report/format.ts";
import { describeLoad, type PointRecord } from "../sweep/mod.ts";
import {
  type CombinationPoint,
  compareCombined,
  type ConcurrentOutcome,
  isCandidate,
  rankCombinations,
} from "./concurrent.ts";
import { inferenceTable, instanceGroupText } from "./fields.ts";
import { describeObjectives } from "./objectives.ts";
import { judge } from "../sweep/mod.ts";
import type { SearchModel } from "./config.ts";

const p99Text = (r: PointRecord) => {
  const us = r.result.client.percentilesUs.get(99);
  return us === undefined ? "-" : (us / 1000).toFixed(1);
};

/** `  delay_config_1 (2:CPU, max batch 4): 391.2 infer/sec, p99 20.1 ms` per model. */
function partLines(point: CombinationPoint, outcome: ConcurrentOutcome): string[] {
  return point.parts.map((part, i) => {
    const v = outcome.combinations.find((c) => c.points.includes(point))!.combination.members[i]!;
    return `        ${outcome.models[i]!.name}: ${v.name} (${
      instanceGroupText(v.config)
    }, max batch ${v.config.max_batch_size ?? 0}): ${
      formatGeneral(Number(part.result.client.throughput.toFixed(1)))
    } infer/sec, p99 ${p99Text(part)} ms`;
  });
}

/** The closing summary of a concurrent search: the top combinations, each model's part of each. */
export function formatConcurrentSummary(
  outcome: ConcurrentOutcome,
  options: { numConfigs: number },
): string {
  const { models } = outcome;
  const points = outcome.combinations.reduce((n, c) => n + c.points.length, 0);
  const lines = [
    `Models ${
      models.map((m) => m.name).join(", ")
    } measured together: ${outcome.combinations.length} combinations, ${points} points; weighting ${
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
    lines.push(
      `  ${i === 0 ? "Best" : `#${i + 1}  `} ${c.combination.name} at ${
        describeLoad(best.parts[0]!.point)
      }:`,
    );
    lines.push(...partLines(best, outcome));
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

/** metrics-model-inference.csv of a concurrent search: combinations best first, a row per model. */
export function formatConcurrentCsv(outcome: ConcurrentOutcome, fields: readonly string[]): string {
  const { models } = outcome;
  const ranked = rankCombinations(outcome.combinations, models);
  const order = [
    ...ranked.map((r) => r.outcome),
    ...outcome.combinations.filter((c) => !ranked.some((r) => r.outcome === c)),
  ];
  const satisfies = (part: PointRecord, model: SearchModel) =>
    judge([part], { ...model, result: (r) => r.result, group: () => "" })[0]!.reasons.length === 0;
  // Within a combination, its points best first, as a model's; those that are no candidate last.
  const best = (c: (typeof order)[number]) => {
    const good = c.points.filter((p) => isCandidate(p, models))
      .sort((x, y) => -compareCombined(x, y, models));
    return [...good, ...c.points.filter((p) => !good.includes(p))];
  };
  const rows = order.flatMap((c) =>
    best(c).flatMap((point) =>
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
