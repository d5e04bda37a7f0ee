/** The console report: settings, each level's block, progress, verbose windows, summary table. */
import { REPORTED_PERCENTILES, summarizeClient } from "../../measure/stats.ts";
import {
  formatLevel,
  formatPass,
  formatSettings,
  formatSummaryTable,
  formatTraceSettings,
  type Settings,
} from "../../report/console.ts";
import type { TraceSettings } from "../../protocol/types.ts";
import type { LevelResult, LoadMode, WindowData } from "../../types/results.ts";
import { describeSlos } from "../capacity.ts";
import { evaluateSlos } from "../../measure/slo.ts";
import { formatCapacity } from "../../report/capacity.ts";
import type { ProfilePlan } from "../plan.ts";
import { rangeLevels } from "../../load/range.ts";
import { Progress, type ProgressStep } from "../progress.ts";
import type { ReportSink, RunEnd, RunTarget, SinkDef } from "./sink.ts";

/** The levels a linear sweep of `plan` measures at most; 0 when that is not known ahead. */
function sweepLength(plan: ProfilePlan): number {
  const range = plan.loadMode === "concurrency"
    ? plan.concurrency
    : plan.loadMode === "request_rate"
    ? plan.requestRate
    : undefined;
  // A binary or capacity search picks its levels as it goes.
  if (!range || range.end === 0 || plan.binarySearch || plan.capacity || plan.stages) return 0;
  let n = 0;
  for (const _ of rangeLevels(range)) n++;
  return n;
}

class ConsoleSink implements ReportSink {
  readonly #plan: ProfilePlan;
  readonly #mode: LoadMode;
  readonly #progress: Progress;
  #decoupled = false;
  /** Levels of a linear sweep (0: not known ahead, as with -l, --binary-search or a search), and started. */
  readonly #levels: number;
  #started = 0;

  constructor(plan: ProfilePlan, options: { mode: LoadMode; step?: ProgressStep }) {
    const mode = options.mode;
    this.#plan = plan;
    this.#mode = mode;
    this.#progress = new Progress({
      enabled: plan.progress,
      batchSize: plan.batchSize,
      mode,
      slos: plan.slos,
      attainment: plan.sloAttainment,
    });
    if (options.step) this.#progress.step(options.step);
    this.#levels = sweepLength(plan);
  }

  traceSettings(settings: TraceSettings): void {
    this.#print(formatTraceSettings(settings));
  }

  ready({ model }: RunTarget): void {
    this.#decoupled = model.decoupled;
    this.#print(formatSettings(this.#settings(model.decoupled)));
  }

  levelStart(value: number): void {
    this.#started++;
    const total = this.#levels;
    const searching = this.#plan.binarySearch || this.#plan.capacity !== undefined;
    this.#progress.levelStart(
      value,
      searching
        ? { index: this.#started }
        : total > 1 && this.#started <= total
        ? { index: this.#started, total }
        : undefined,
    );
  }

  live(completed: () => number): void {
    this.#progress.live(completed);
  }

  window(w: WindowData, info: { level: number; index: number }): void {
    const { batchSize, percentile } = this.#plan;
    this.#progress.window(w);
    if (this.#plan.verbose === 0 || w.latenciesUs.length === 0) return;
    const client = summarizeClient([w], {
      batchSize,
      percentiles: percentile === undefined ? REPORTED_PERCENTILES : [percentile],
    });
    const errors = w.errorCount > 0 ? `    ${w.errorCount} requests failed in this window\n` : "";
    this.#print(formatPass(info.index + 1, client, { percentile }) + errors);
  }

  level(result: LevelResult): void {
    this.#print(formatLevel(result, {
      // In process, perf_analyzer has no client library times (their line stays blank).
      protocol: this.#plan.serviceKind === "triton_c_api" ? "c_api" : this.#plan.protocol,
      percentile: this.#plan.percentile,
      decoupled: this.#decoupled,
      periodic: this.#plan.periodic,
      sessionConcurrency: this.#plan.sessionConcurrency,
      metrics: result.metrics,
    }));
    const { slos, thresholds, sloAttainment } = this.#plan;
    if (slos.length > 0) this.#print(`  ${describeSlos(result, this.#plan)}\n`);
    if (thresholds.length > 0) {
      const verdicts = evaluateSlos(result, thresholds, { attainment: sloAttainment });
      const broken = verdicts.filter((v) => !v.met);
      this.#print(
        `  Thresholds ${broken.length === 0 ? "held" : "breached"}: ${
          (broken.length === 0 ? verdicts : broken).map((v) => v.text).join("; ")
        }\n`,
      );
    }
  }

  warning(message: string): void {
    this.#progress.clear();
    console.error(`warning: ${message}`);
  }

  finish(end: RunEnd): void {
    this.#progress.close();
    if (end.note) this.#print(`${end.note}\n\n`);
    if (end.results.length === 0) return;
    this.#print(formatSummaryTable(end.results, { percentile: this.#plan.percentile }));
    if (end.capacity) this.#print(`\n${formatCapacity(end.capacity)}`);
  }

  #settings(decoupled: boolean): Settings {
    const c = this.#plan;
    return {
      ...c,
      batchSizeGiven: c.batchSize !== 1,
      mode: this.#mode,
      range: c.loadMode === "concurrency" ? c.concurrency : c.requestRate,
      decoupled,
    };
  }

  /** Writes report text as formatted (blocks carry their own line ends). */
  #print(text: string): void {
    this.#progress.clear();
    console.log(text.endsWith("\n") ? text.slice(0, -1) : text);
  }
}

export const consoleSink: SinkDef = {
  wanted: () => true,
  histograms: false,
  open: (plan, { mode, step }) => Promise.resolve(new ConsoleSink(plan, { mode, step })),
};
