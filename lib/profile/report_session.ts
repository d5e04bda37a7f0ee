/**
 * Console and file output of a profiling run, driven by the run's events.
 * Output happens between windows and levels, never inside the request loop.
 * `finish()` is synchronous so a second Ctrl-C can still write what exists.
 */
import type { ProfileConfig } from "../cli/config.ts";
import { REPORTED_PERCENTILES, summarizeClient } from "../measure/stats.ts";
import type { LevelResult, WindowData } from "../measure/types.ts";
import {
  formatCsv,
  formatLevel,
  formatPass,
  formatSettings,
  formatSummaryTable,
  type Settings,
} from "../report/mod.ts";
import type { RunEvents } from "./run.ts";

const encoder = new TextEncoder();

/** A one-line progress display on a terminal; silent when stderr is piped. */
class ProgressLine {
  readonly #enabled: boolean;
  #text = "";
  #shown = false;

  constructor(enabled: boolean) {
    this.#enabled = enabled && Deno.stderr.isTerminal();
  }

  show(text: string): void {
    if (!this.#enabled) return;
    this.#text = text;
    this.#shown = true;
    Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${this.#text}`));
  }

  clear(): void {
    if (!this.#shown) return;
    Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
    this.#shown = false;
  }
}

export class ReportSession {
  readonly results: LevelResult[] = [];
  readonly events: RunEvents;
  readonly #config: ProfileConfig;
  readonly #progress: ProgressLine;
  #decoupled = false;
  #finished = false;

  constructor(config: ProfileConfig) {
    this.#config = config;
    this.#progress = new ProgressLine(config.verbose === 0);
    this.events = {
      ready: ({ model }) => {
        this.#decoupled = model.decoupled;
        this.#print(formatSettings(this.#settings(model.decoupled)));
      },
      levelStart: (value) => this.#progress.show(`Measuring concurrency ${value} ...`),
      window: (w, { level, index }) => this.#window(w, { level, index }),
      level: (result) => {
        this.results.push(result);
        this.#print(formatLevel(result, this.#formatOptions()));
      },
    };
  }

  /** Failed requests over all reported levels. */
  get failedRequests(): number {
    return this.results.reduce((n, r) => n + r.client.errorCount, 0);
  }

  /** Prints the closing note and summary table and writes the CSV; idempotent. */
  finish(note?: string): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#progress.clear();
    if (note) this.#print(`${note}\n\n`);
    if (this.results.length === 0) return;
    this.#print(formatSummaryTable(this.results, { percentile: this.#config.percentile }));
    const file = this.#config.latencyReportFile;
    if (file) {
      Deno.writeTextFileSync(
        file,
        formatCsv(this.results, {
          mode: "concurrency",
          verbose: this.#config.verboseCsv,
          percentile: this.#config.percentile,
          decoupled: this.#decoupled,
        }),
      );
    }
  }

  #settings(decoupled: boolean): Settings {
    const c = this.#config;
    return {
      ...c,
      batchSizeGiven: c.batchSize !== 1,
      mode: "concurrency",
      range: c.concurrency,
      decoupled,
    };
  }

  #formatOptions() {
    return {
      protocol: this.#config.protocol,
      percentile: this.#config.percentile,
      decoupled: this.#decoupled,
    };
  }

  #window(w: WindowData, info: { level: number; index: number }): void {
    const { batchSize, percentile, maxTrials } = this.#config;
    this.#progress.show(
      `Measuring concurrency ${info.level}: window ${
        info.index + 1
      }/${maxTrials}, ${w.latenciesUs.length} requests`,
    );
    if (this.#config.verbose === 0 || w.latenciesUs.length === 0) return;
    const client = summarizeClient([w], {
      batchSize,
      percentiles: percentile === undefined ? REPORTED_PERCENTILES : [percentile],
    });
    const errors = w.errorCount > 0 ? `    ${w.errorCount} requests failed in this window\n` : "";
    this.#print(formatPass(info.index + 1, client, { percentile }) + errors);
  }

  /** Writes report text as formatted (blocks carry their own line ends). */
  #print(text: string): void {
    this.#progress.clear();
    console.log(text.endsWith("\n") ? text.slice(0, -1) : text);
  }
}
