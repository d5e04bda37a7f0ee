/**
 * `inferperf merge -o OUT RUN...`: merges the summary JSONs or the profile
 * exports of runs that loaded a server side by side into one (see
 * lib/report/merge.ts), and prints each merged level on one line.
 */
import { UsageError } from "../types/errors.ts";
import { writeFileAtomic } from "../report/output_file.ts";
import type { Outcome } from "./outcome.ts";

const USAGE = "Usage: inferperf merge -o OUT.json RUN1.json RUN2.json ...";

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;

/** `inferperf merge`'s command line: -o/--output (lib/cli/flags/output.ts) and the runs. */
export interface MergeArgs {
  output?: string;
  runs: readonly string[];
}

function checkArgs(args: MergeArgs): { out: string; inputs: readonly string[] } {
  const errors: string[] = [];
  if (args.output === undefined) errors.push(`Option -o/--output is required. ${USAGE}`);
  if (args.runs.length < 2) errors.push(`Give at least two runs to merge. ${USAGE}`);
  if (errors.length > 0) throw new UsageError(errors);
  return { out: args.output!, inputs: args.runs };
}

/**
 * A run's JSON file (a summary or an export); `exact` keeps numbers as
 * written (merge.ts's parseExact), for files that are written back.
 */
export async function readRun(path: string, options = { exact: true }): Promise<Doc> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new UsageError([`Can not read "${path}": ${(error as Error).message}`]);
  }
  try {
    if (!options.exact) return JSON.parse(text);
    const { parseExact } = await import("../report/merge.ts");
    return parseExact(text);
  } catch (error) {
    throw new UsageError([`"${path}" is not JSON: ${(error as Error).message}`]);
  }
}

export async function mergeCommand(args: MergeArgs): Promise<Outcome> {
  const { out, inputs } = checkArgs(args);
  const docs = await Promise.all(inputs.map((path) => readRun(path)));
  // The histogram library loads only for merges.
  const { mergeExports, MergeError, mergeKind, mergeSummaries } = await import(
    "../report/merge.ts"
  );
  try {
    const kinds = docs.map((d, i) => mergeKind(d, inputs[i]));
    if (kinds.some((k) => k !== kinds[0])) {
      throw new MergeError("summary JSONs and profile exports can not be merged together");
    }
    const merged = kinds[0] === "summary" ? mergeSummaries(docs) : mergeExports(docs);
    writeFileAtomic(out, `${JSON.stringify(merged, null, kinds[0] === "summary" ? 2 : 0)}\n`);
    console.log(
      `Merged ${docs.length} ${kinds[0] === "summary" ? "summaries" : "exports"} into ${out}`,
    );
    if (kinds[0] === "summary") {
      for (const [i, level] of (merged.levels as Doc[]).entries()) {
        const p99 = level.client.percentiles_us["99"];
        const parts = docs.map((d) => d.levels[i].value);
        const load = parts.every((v) => v === level.value)
          ? `in each of ${parts.length} runs, ${level.merged_total_value} in all`
          : `the runs' ${parts.join(" + ")}`;
        console.log(
          `  ${level.mode} ${level.value} (${load}): ` +
            `${level.client.throughput.toFixed(2)} infer/sec, ` +
            `${level.client.request_count} requests, avg latency ` +
            `${Math.round(level.client.avg_latency_us)} usec, p99 ${Math.round(p99)} usec`,
        );
      }
    }
  } catch (error) {
    if (error instanceof MergeError) throw new UsageError([error.message]);
    throw error;
  }
  return "ok";
}
