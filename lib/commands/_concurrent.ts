/** The concurrent multi-model search's console and files (run_config_profile_models_concurrently_enable). */
import { writeAll, writeFileAtomic } from "../report/output_file.ts";
import { formatGeneral } from "../report/format.ts";
import {
  type ConcurrentEvents,
  type ConcurrentOutcome,
  concurrentReportKey,
  describeCombinationPoint,
  formatConcurrentCsv,
  formatConcurrentSummary,
  rankCombinations,
  renderConcurrentHtml,
  type SearchConfig,
  serverTable,
  writeBestDirectory,
} from "../search/mod.ts";
import { csvText } from "../report/csv.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { type Outcome, printError } from "./outcome.ts";

/** Progress lines: each combination, each point's figures per model. */
export const CONCURRENT_EVENTS: ConcurrentEvents = {
  point: (point, c) =>
    console.log(
      `[${c.name}] ${describeCombinationPoint(point, c)}: ${
        point.parts.map((part, i) => {
          const p99 = part.result.client.percentilesUs.get(99);
          return `${c.members[i]!.model} ${
            formatGeneral(Number(part.result.client.throughput.toFixed(1)))
          } infer/sec, p99 ${p99 === undefined ? "-" : (p99 / 1000).toFixed(1)} ms${
            part.result.stable ? "" : " (unstable)"
          }`;
        }).join("; ")
      }`,
    ),
  seriesEnd: (reason) => console.log(`    ${reason}`),
  failed: (_, message) => console.log(`    failed: ${message}`),
  optuna: (r) =>
    console.log(
      `Optuna search across the models: ${r.trials} trials (${r.bounds.min} to ${r.bounds.max} of a space of ${r.size} points), the best score at ${
        r.bestTrial === 0 ? "the baseline" : `trial ${r.bestTrial}`
      }`,
    ),
};

/** The summary, the CSVs and (unless a report) each model's configuration of the best combination. */
export function finishConcurrent(
  config: SearchConfig,
  outcome: ConcurrentOutcome,
  options: { bestDirectories: boolean },
): Outcome {
  console.log(formatConcurrentSummary(outcome, config));
  const results = `${config.exportPath}/results`;
  Deno.mkdirSync(results, { recursive: true });
  const ram = outcome.combinations.flatMap((c) => {
    const values = c.points.flatMap((p) => p.parts.map((r) => r.result.serverRamMb))
      .filter((n) => n !== undefined) as number[];
    return values.length === 0 ? [] : [{
      model: outcome.models.map((m) => m.name).join("+"),
      variant: c.combination.name,
      ramMb: Math.max(...values),
    }];
  });
  const files = [
    [
      `${results}/metrics-model-inference.csv`,
      formatConcurrentCsv(outcome, config.inferenceFields),
    ],
    [
      `${results}/metrics-server-only.csv`,
      csvText(serverTable(config.serverFields, ram)),
    ],
  ] as const;
  writeAll(files.map(([path, text]) => () => writeFileAtomic(path, text)));
  console.log(`Results written to ${files.map(([path]) => path).join(" and ")}`);
  const summary = `${config.exportPath}/reports/summaries/${concurrentReportKey(outcome)}`;
  Deno.mkdirSync(summary, { recursive: true });
  writeFileAtomic(
    `${summary}/result_summary.html`,
    renderConcurrentHtml(outcome, { version: denoConfig.version, numConfigs: config.numConfigs }),
  );
  console.log(
    `Summary of ${
      outcome.models.map((m) => m.name).join(" and ")
    } written to ${summary}/result_summary.html`,
  );
  const best = rankCombinations(outcome.combinations, outcome.models)[0];
  for (const variant of options.bestDirectories && best ? best.outcome.combination.members : []) {
    const directory = writeBestDirectory({
      outputRepository: config.outputRepository,
      modelRepository: config.modelRepository,
      variant,
    });
    console.log(`Best configuration of ${variant.model} (${variant.name}) written to ${directory}`);
  }
  const failed = outcome.combinations.filter((c) => c.failure).length;
  if (failed > 0) printError(`${failed} combinations could not be measured; see "Failed"`);
  return failed > 0 ? "failed" : "ok";
}
