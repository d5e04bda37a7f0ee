/**
 * `inferperf compare BASELINE CANDIDATE`: two summary JSONs compared level
 * by level and figure by figure (lib/report/compare.ts), printed as
 * benchstat prints; --html overlays their curves; --fail-on-regression PCT
 * turns a significant regression beyond PCT percent into the outcome
 * "regression" (exit 5).
 */
import { UsageError } from "../types/errors.ts";
import { writeFileAtomic } from "../report/output_file.ts";
import { checkOutputs } from "../report/output_file.ts";
import type { JsonObject } from "../report/figures.ts";
import { readRun } from "./merge.ts";
import { type Outcome, printError } from "./outcome.ts";

const USAGE = "Usage: inferperf compare BASELINE.json CANDIDATE.json [--html FILE] " +
  "[--fail-on-regression PCT] [--confidence-level F]";

export interface CompareArgs {
  files: readonly string[];
  html?: string;
  /** --fail-on-regression, percent. */
  failOnRegression?: number;
  confidenceLevel: number;
}

async function readSummary(path: string): Promise<JsonObject> {
  const doc = await readRun(path, { exact: false }) as JsonObject;
  const { mergeKind } = await import("../report/merge.ts");
  let kind;
  try {
    kind = mergeKind(doc, path);
  } catch (error) {
    throw new UsageError([(error as Error).message]);
  }
  if (kind !== "summary") {
    throw new UsageError([
      `${path} is a profile export: inferperf compare reads summary JSONs (--summary-json)`,
    ]);
  }
  return doc;
}

export async function compareCommand(args: CompareArgs): Promise<Outcome> {
  const errors: string[] = [];
  if (args.files.length !== 2) errors.push(`Give two summary JSONs to compare. ${USAGE}`);
  if (args.failOnRegression !== undefined && !(args.failOnRegression >= 0)) {
    errors.push(
      `Invalid value "${args.failOnRegression}" for --fail-on-regression: expected a percentage >= 0`,
    );
  }
  if (!(args.confidenceLevel > 0 && args.confidenceLevel < 1)) {
    errors.push(
      `Invalid value "${args.confidenceLevel}" for --confidence-level: expected a number between 0 and 1`,
    );
  }
  if (errors.length > 0) throw new UsageError(errors);
  if (args.html !== undefined) checkOutputs([{ path: args.html, flag: "--html" }]);
  const [baseline, candidate] = await Promise.all(args.files.map(readSummary));
  const { compareSummaries, formatComparison, regressionPct, regressionsBeyond } = await import(
    "../report/compare.ts"
  );
  const comparison = compareSummaries(baseline, candidate, {
    confidenceLevel: args.confidenceLevel,
  });
  const names = { baseline: args.files[0], candidate: args.files[1] };
  console.log(formatComparison(comparison, names).trimEnd());
  if (args.html !== undefined) {
    const { renderCompareHtml } = await import("../report/compare_html.ts");
    writeFileAtomic(args.html, renderCompareHtml({ baseline, candidate }, { comparison, names }));
    console.log(`Comparison written to ${args.html}`);
  }
  if (args.failOnRegression === undefined) return "ok";
  const regressions = regressionsBeyond(comparison, args.failOnRegression);
  for (const { level, f } of regressions) {
    printError(
      `${f.label} at ${level} regressed by ${
        regressionPct(f).toFixed(1)
      } % (beyond --fail-on-regression ${args.failOnRegression} %)`,
    );
  }
  return regressions.length > 0 ? "regression" : "ok";
}
