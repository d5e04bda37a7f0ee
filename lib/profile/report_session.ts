/**
 * Console and file output of a profiling run, driven by the run's events.
 * Output happens between windows and levels, never inside the request loop.
 * `finish()` is synchronous so a second Ctrl-C can still write what exists.
 */
import type { ProfileConfig } from "../cli/config.ts";
import { REPORTED_PERCENTILES, summarizeClient, withReported } from "../measure/stats.ts";
import type { LevelResult, WindowData } from "../measure/types.ts";
import type { LatencyHistogram } from "../measure/histogram.ts";
import {
  formatLevel,
  formatPass,
  formatSettings,
  formatSummaryTable,
  formatTraceSettings,
  type Settings,
} from "../report/console.ts";
import { formatCsv } from "../report/csv.ts";
import type { ProfileExportWriter } from "../report/export.ts";
import { formatGeneral } from "../report/format.ts";
import type { renderHtmlReport } from "../report/html.ts";
import type { formatSummaryJson } from "../report/summary_json.ts";
import type { RunEvents } from "./run.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import type { ModelInfo, ServerInfo } from "../protocol/types.ts";

const encoder = new TextEncoder();

/**
 * The writers of the report files a run asks for. They load the histogram
 * library (about 20 ms of start-up), so ReportSession.open() imports them
 * only for those runs.
 */
interface FileWriters {
  /** --profile-export-file: written as the run goes. */
  export?: ProfileExportWriter;
  summaryJson?: typeof formatSummaryJson;
  reportHtml?: typeof renderHtmlReport;
  /** The windows' latency histograms, which the three files carry. */
  newHistogram?: () => LatencyHistogram;
}

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
  readonly #files: FileWriters;
  readonly #export: ProfileExportWriter | undefined;
  #target: { server: ServerInfo; model: ModelInfo } | undefined;

  /** A session for `config`, with the writers of the files it asks for loaded. */
  static async open(config: ProfileConfig): Promise<ReportSession> {
    const { profileExportFile, summaryJson, reportHtml } = config;
    const [exporter, summary, html, histogram] = await Promise.all([
      profileExportFile ? import("../report/export.ts") : undefined,
      summaryJson ? import("../report/summary_json.ts") : undefined,
      reportHtml ? import("../report/html.ts") : undefined,
      profileExportFile || summaryJson || reportHtml
        ? import("../measure/histogram.ts")
        : undefined,
    ]);
    return new ReportSession(config, {
      ...(exporter && profileExportFile
        ? { export: new exporter.ProfileExportWriter(profileExportFile) }
        : {}),
      ...(summary ? { summaryJson: summary.formatSummaryJson } : {}),
      ...(html ? { reportHtml: html.renderHtmlReport } : {}),
      ...(histogram ? { newHistogram: () => new histogram.LatencyHistogram() } : {}),
    });
  }

  private constructor(config: ProfileConfig, files: FileWriters) {
    this.#config = config;
    this.#progress = new ProgressLine(config.verbose === 0);
    this.#files = files;
    this.#export = files.export;
    this.events = {
      traceSettings: (settings) => this.#print(formatTraceSettings(settings)),
      ready: ({ server, model }) => {
        this.#target = { server, model };
        this.#decoupled = model.decoupled;
        this.#print(formatSettings(this.#settings(model.decoupled)));
      },
      levelStart: (value) => {
        this.#export?.beginExperiment(config.loadMode, value);
        this.#progress.show(`Measuring ${this.#levelName(value)} ...`);
      },
      window: (w, { level, index }) => {
        this.#export?.addWindow(w);
        this.#window(w, { level, index });
      },
      level: (result) => {
        this.results.push(result);
        this.#print(formatLevel(result, { ...this.#formatOptions(), metrics: result.metrics }));
      },
      warning: (message) => {
        this.#progress.clear();
        console.error(`warning: ${message}`);
      },
      requests: this.#export,
      ...(files.newHistogram ? { newHistogram: files.newHistogram } : {}),
    };
  }

  /** Failed requests over all reported levels. */
  get failedRequests(): number {
    return this.results.reduce((n, r) => n + r.client.errorCount, 0);
  }

  /**
   * Completes the profile export, prints the closing note and summary table
   * and writes the CSV, summary and HTML files; idempotent.
   */
  finish(note?: string): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#progress.clear();
    // First: after a hard interrupt this is all that gets written before the process exits.
    this.#export?.finish({
      version: denoConfig.version,
      serviceKind: this.#config.serviceKind,
      endpoint: this.#config.endpoint,
    });
    if (note) this.#print(`${note}\n\n`);
    if (this.results.length === 0) return;
    this.#print(formatSummaryTable(this.results, { percentile: this.#config.percentile }));
    const file = this.#config.latencyReportFile;
    if (file) {
      Deno.writeTextFileSync(
        file,
        formatCsv(this.results, {
          mode: this.#config.loadMode,
          verbose: this.#config.verboseCsv,
          percentile: this.#config.percentile,
          decoupled: this.#decoupled,
          ...(this.#config.collectMetrics ? { metrics: this.#metricsByLevel() } : {}),
        }),
      );
    }
    this.#writeReports(note);
  }

  /** --summary-json and --report-html. */
  #writeReports(note: string | undefined): void {
    const c = this.#config;
    const { summaryJson, reportHtml } = this.#files;
    if (!summaryJson && !reportHtml) return;
    const model = {
      name: this.#target?.model.name ?? c.model,
      version: this.#target?.model.version ?? c.modelVersion,
    };
    if (summaryJson && c.summaryJson) {
      const server = this.#target?.server;
      Deno.writeTextFileSync(
        c.summaryJson,
        summaryJson(this.results, {
          version: denoConfig.version,
          model,
          ...(server ? { server: { name: server.name, version: server.version } } : {}),
          settings: { ...c, mode: c.loadMode },
          ...(note ? { note } : {}),
          percentiles: withReported(c.percentile === undefined ? [] : [c.percentile]),
        }),
      );
    }
    if (reportHtml && c.reportHtml) {
      Deno.writeTextFileSync(
        c.reportHtml,
        reportHtml(this.results, {
          version: denoConfig.version,
          model,
          mode: c.loadMode,
          batchSize: c.batchSize,
          ...(c.percentile === undefined ? {} : { percentile: c.percentile }),
          ...(note ? { note } : {}),
        }),
      );
    }
  }

  /** --collect-metrics per level, for the CSV. */
  #metricsByLevel(): Map<number, NonNullable<LevelResult["metrics"]>> {
    return new Map(
      this.results.flatMap((r) => r.metrics ? [[r.value, r.metrics] as const] : []),
    );
  }

  #settings(decoupled: boolean): Settings {
    const c = this.#config;
    return {
      ...c,
      batchSizeGiven: c.batchSize !== 1,
      mode: c.loadMode,
      range: c.loadMode === "concurrency" ? c.concurrency : c.requestRate,
      decoupled,
    };
  }

  #levelName(value: number): string {
    return this.#config.loadMode === "concurrency"
      ? `concurrency ${value}`
      : `request rate ${formatGeneral(value)}`;
  }

  #formatOptions() {
    return {
      protocol: this.#config.serviceKind === "triton_c_api"
        ? "c_api" as const
        : this.#config.protocol,
      percentile: this.#config.percentile,
      decoupled: this.#decoupled,
      periodic: this.#config.periodic,
    };
  }

  #window(w: WindowData, info: { level: number; index: number }): void {
    const { batchSize, percentile, maxTrials } = this.#config;
    this.#progress.show(
      `Measuring ${this.#levelName(info.level)}: window ${
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
