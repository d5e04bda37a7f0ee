/**
 * The outputs of a profiling run (sinks/mod.ts), driven by the run's events:
 * each event goes to the sinks the plan asks for, in registry order. Output
 * happens between windows and levels, never inside the request loop.
 * `finish()` is synchronous so a second Ctrl-C can still write what exists.
 */
import { loadMode } from "../load/modes/mod.ts";
import type { LevelResult } from "../types/results.ts";
import type { ProfilePlan } from "./plan.ts";
import type { ProgressStep } from "./progress.ts";
import type { RunEvents } from "./run.ts";
import { REPORT_SINKS, type ReportSink, type RunEnd, type RunTarget } from "./sinks/mod.ts";
import { writeAll } from "../report/output_file.ts";
import type { RequestTracer } from "../report/export.ts";
import type { RequestSink } from "../types/timing.ts";

export class ReportSession {
  readonly results: LevelResult[] = [];
  readonly events: RunEvents;
  readonly #sinks: readonly ReportSink[];
  #finished = false;
  #target: RunTarget | undefined;

  /**
   * A session with the sinks `plan` asks for opened (their report modules
   * loaded). `console: false` leaves the console out (repeat runs report each
   * run's console apart); `histograms` records them though no sink asks.
   */
  static async open(
    plan: ProfilePlan,
    options: { console?: boolean; histograms?: boolean; step?: ProgressStep } = {},
  ): Promise<ReportSession> {
    const mode = loadMode(plan.loadMode).reportAs;
    const wanted = [...REPORT_SINKS].filter(([name, sink]) =>
      sink.wanted(plan) && (options.console !== false || name !== "console")
    ).map(([, sink]) => sink);
    const histograms = options.histograms || wanted.some((sink) => sink.histograms);
    // The histogram library costs about 20 ms of start-up: loaded for the outputs that carry them.
    const [histogram, ...sinks] = await Promise.all([
      histograms ? import("../measure/histogram.ts") : undefined,
      ...wanted.map((sink) =>
        sink.open(plan, { mode, ...(options.step ? { step: options.step } : {}) })
      ),
    ]);
    return new ReportSession(sinks as ReportSink[], {
      ...(histogram ? { newHistogram: () => new histogram.LatencyHistogram() } : {}),
    });
  }

  /** The windows' latency histograms are recorded (an output carries them). */
  readonly histograms: boolean;

  private constructor(sinks: ReportSink[], events: Pick<RunEvents, "newHistogram">) {
    this.#sinks = sinks;
    this.histograms = events.newHistogram !== undefined;
    const requests = withRecords(
      sinks.find((sink) => sink.requests)?.requests,
      sinks.flatMap((sink) => sink.records ?? []),
    );
    this.events = {
      traceSettings: (settings) => this.#each((sink) => sink.traceSettings?.(settings)),
      ready: (target) => {
        this.#target = target;
        this.#each((sink) => sink.ready?.(target));
      },
      levelStart: (value) => this.#each((sink) => sink.levelStart?.(value)),
      live: (completed) => this.#each((sink) => sink.live?.(completed)),
      window: (w, info) => this.#each((sink) => sink.window?.(w, info)),
      level: (result) => {
        this.results.push(result);
        this.#each((sink) => sink.level?.(result));
      },
      warning: (message) => this.#each((sink) => sink.warning?.(message)),
      ...(requests ? { requests } : {}),
      ...events,
    };
  }

  /** Failed requests over all reported levels. */
  get failedRequests(): number {
    return this.results.reduce((n, r) => n + r.client.errorCount, 0);
  }

  /**
   * Tells every sink the run ended (they write their files); idempotent.
   * Every sink writes even when one fails (each holds what was measured);
   * then the first failure is thrown.
   */
  finish(note?: string, extra: Pick<RunEnd, "capacity"> = {}): void {
    this.finishWith({
      results: this.results,
      ...(note ? { note } : {}),
      ...extra,
      ...(this.#target ? { target: this.#target } : {}),
    });
  }

  /** The server and model, once the run discovered them. */
  get target(): RunTarget | undefined {
    return this.#target;
  }

  /** Tells every sink the run ended as `end` says, whatever its events were; idempotent. */
  finishWith(end: RunEnd): void {
    if (this.#finished) return;
    this.#finished = true;
    writeAll(this.#sinks.map((sink) => () => sink.finish?.(end)));
  }

  #each(tell: (sink: ReportSink) => void): void {
    for (const sink of this.#sinks) tell(sink);
  }
}

/**
 * The tracer the run hands every request: the export's, also telling the
 * record sinks; without an export, one that wraps nothing. Unchanged without
 * record sinks.
 */
function withRecords(
  tracer: RequestTracer | undefined,
  records: readonly RequestSink[],
): RequestTracer | undefined {
  if (records.length === 0) return tracer;
  return {
    wrapClient: (client) => tracer ? tracer.wrapClient(client) : client,
    noteRemote: (timing, seen) => tracer?.noteRemote(timing, seen),
    add(request) {
      tracer?.add(request);
      for (const sink of records) sink.add(request);
    },
    rotated(atMs) {
      tracer?.rotated?.(atMs);
      for (const sink of records) sink.rotated?.(atMs);
    },
  };
}
