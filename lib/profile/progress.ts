/**
 * Where a run is, for runs that take long: searches, sweeps, repeat runs,
 * long levels. On a terminal one live line on stderr (the step, k of n,
 * elapsed time, requests, the last window's throughput and latency, the SLO
 * figures when there are SLOs), redrawn twice a second; elsewhere the same
 * as a plain line every PLAIN_EVERY_MS of a long level (the commands print
 * each step on stdout themselves).
 * `--no-progress` (enabled: false) turns it off.
 *
 * Driven by a run's events (`events()`: level start, windows, levels) and by
 * the caller's steps, never from the request loop: the live count of
 * requests is read from the level's recorder by the redraw timer.
 */
import { evaluateSlos, type Slo, type SloVerdict } from "../measure/slo.ts";
import { percentile, summarizeClient } from "../measure/stats.ts";
import { summarizeTokens } from "../measure/tokens.ts";
import { formatGeneral } from "../report/format.ts";
import type { LevelResult, LoadMode, WindowData } from "../types/results.ts";
import type { RunEvents } from "./run.ts";

/** How often the live line is redrawn. */
const REDRAW_MS = 500;
/** Without a terminal, a level that runs this long gets a line this often. */
export const PLAIN_EVERY_MS = 30_000;

const encoder = new TextEncoder();

/** Where progress goes: stderr, or a test's stand-in. */
export interface ProgressOutput {
  isTerminal(): boolean;
  writeSync(bytes: Uint8Array): number;
}

export interface ProgressOptions {
  /** False (--no-progress): nothing is shown. */
  enabled: boolean;
  /** Default Deno.stderr. */
  output?: ProgressOutput;
  /** -b: throughput in inferences. */
  batchSize?: number;
  /** The SLOs whose figures the line shows, judged on the last window. */
  slos?: readonly Slo[];
  attainment?: number;
  /** How levels are named: concurrency (default) or request rate. */
  mode?: LoadMode;
  /** Milliseconds; default performance.now. */
  now?: () => number;
}

/** The step a caller is at: "point 3 of 12", "run 2 of 5". */
export interface ProgressStep {
  /** What is measured, e.g. "concurrency 4" or "instance_count=2 concurrency 8". */
  label: string;
  /** 1-based. */
  index?: number;
  /** Steps in all, when known. */
  total?: number;
  /** What a step is called: "point" (default), "run". */
  noun?: string;
  /** How the step's levels are named, when not as the progress's own mode. */
  mode?: LoadMode;
}

/** A one-window result, for the SLO figures of the last window. */
function windowResult(
  w: WindowData,
  options: { mode: LoadMode; value: number; batchSize: number; slos: readonly Slo[] },
): LevelResult {
  const percentiles = options.slos.flatMap((s) => {
    const p = /^p(\d+(?:\.\d+)?)$/.exec(s.metric.statistic ?? "");
    return p ? [Number(p[1])] : [];
  });
  const llm = w.tokens ? summarizeTokens([w], { percentiles }) : undefined;
  return {
    mode: options.mode,
    value: options.value,
    client: summarizeClient([w], { batchSize: options.batchSize, percentiles }),
    stable: true,
    windows: [w],
    ...(llm ? { llm } : {}),
  };
}

/** A percentile of microsecond samples as the reports take it (perf_analyzer's rank), in ms. */
function percentileMs(samples: ArrayLike<number>, p: number): number | undefined {
  if (samples.length === 0) return undefined;
  return percentile(Float64Array.from(samples).sort(), p) / 1000;
}

const seconds = (ms: number) => `${formatGeneral(Math.round(ms / 100) / 10)} s`;
/** Three significant figures or whole numbers: a line read at a glance. */
const short = (n: number) => formatGeneral(n >= 100 ? Math.round(n) : Number(n.toPrecision(3)));

export class Progress {
  readonly #enabled: boolean;
  readonly #live: boolean;
  readonly #output: ProgressOutput;
  readonly #batchSize: number;
  readonly #slos: readonly Slo[];
  readonly #attainment: number | undefined;
  readonly #now: () => number;
  #step: ProgressStep | undefined;
  #stepStartMs = 0;
  #level: string | undefined;
  #levelValue = 0;
  #levelStartMs = 0;
  readonly #mode: LoadMode;
  #stepMode: LoadMode;
  /** Requests of the level's finished windows, and the live count of the current one. */
  #doneRequests = 0;
  #current: (() => number) | undefined;
  #figures = "";
  #timer: ReturnType<typeof setInterval> | undefined;
  #shown = false;
  #lastPlainMs = 0;

  constructor(options: ProgressOptions) {
    this.#output = options.output ?? Deno.stderr;
    this.#enabled = options.enabled;
    this.#live = options.enabled && this.#output.isTerminal();
    this.#batchSize = options.batchSize ?? 1;
    this.#slos = options.slos ?? [];
    this.#attainment = options.attainment;
    this.#now = options.now ?? (() => performance.now());
    this.#mode = options.mode ?? "concurrency";
    this.#stepMode = this.#mode;
  }

  /**
   * A step starts (a point of a search or sweep, a repeat run). Plain output
   * does not repeat it: the commands print their steps on stdout.
   */
  step(step: ProgressStep): void {
    if (!this.#enabled) return;
    this.#step = step;
    this.#stepMode = step.mode ?? this.#mode;
    this.#stepStartMs = this.#now();
    this.#level = undefined;
    this.#figures = "";
    if (this.#live) this.#start();
  }

  /** The events of a run (to pass to runProfile, or to merge with a report session's). */
  events(): Pick<RunEvents, "levelStart" | "window" | "level" | "live"> {
    return {
      levelStart: (value) => this.levelStart(value),
      live: (completed) => this.live(completed),
      window: (w) => this.window(w),
      level: () => this.#endLevel(),
    };
  }

  /** A load level starts; `position`: which of a sweep's levels it is. */
  levelStart(value: number, position?: { index: number; total?: number }): void {
    if (!this.#enabled) return;
    this.#levelValue = value;
    this.#level =
      (this.#stepMode === "concurrency"
        ? `concurrency ${value}`
        : `request rate ${formatGeneral(value)}`) +
      (position === undefined
        ? ""
        : ` (level ${position.index}${position.total ? ` of ${position.total}` : ""})`);
    this.#levelStartMs = this.#now();
    this.#lastPlainMs = this.#levelStartMs;
    this.#doneRequests = 0;
    this.#current = undefined;
    this.#figures = "";
    this.#start();
  }

  /** The level's count of requests completed so far in its current window. */
  live(completed: () => number): void {
    this.#current = completed;
  }

  /** A window of the level ended: its figures become the line's. */
  window(w: WindowData): void {
    if (!this.#enabled) return;
    const requests = w.latenciesUs.length + w.errorCount;
    this.#doneRequests += requests;
    const elapsedS = (w.endMs - w.startMs) / 1000;
    const parts: string[] = [];
    if (elapsedS > 0) {
      parts.push(`${short(w.latenciesUs.length * this.#batchSize / elapsedS)} infer/s`);
    }
    const p99 = percentileMs(w.latenciesUs, 99);
    if (p99 !== undefined) parts.push(`p99 ${short(p99)} ms`);
    if (w.errorCount > 0) parts.push(`${w.errorCount} failed`);
    if (this.#slos.length > 0 && w.latenciesUs.length > 0) {
      const verdicts = evaluateSlos(
        windowResult(w, {
          mode: this.#stepMode,
          value: this.#levelValue,
          batchSize: this.#batchSize,
          slos: this.#slos,
        }),
        this.#slos,
        { attainment: this.#attainment },
      );
      parts.push(...verdicts.map((v: SloVerdict) => `${v.text} ${v.met ? "ok" : "BREACHED"}`));
    }
    this.#figures = parts.join(", ");
    this.#redraw();
  }

  /** Prints a line of a command's own report on stdout, under the live line. */
  print(text: string): void {
    this.clear();
    console.log(text);
  }

  /** Clears the live line before other output (console reports print through this). */
  clear(): void {
    if (!this.#shown) return;
    this.#output.writeSync(encoder.encode("\r\x1b[2K"));
    this.#shown = false;
  }

  /** The step or run is over: the line goes, the timer stops. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.clear();
  }

  #endLevel(): void {
    this.#level = undefined;
    this.#current = undefined;
  }

  #start(): void {
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#redraw(), this.#live ? REDRAW_MS : 1000);
      // Progress never keeps a finished run's process alive.
      Deno.unrefTimer(this.#timer);
    }
    if (this.#live) this.#redraw();
  }

  #stepText(): string {
    const step = this.#step;
    if (step === undefined) return "";
    const noun = step.noun ?? "point";
    const position = step.index === undefined
      ? ""
      : step.total === undefined
      ? ` ${step.index}`
      : ` ${step.index} of ${step.total}`;
    return `${noun}${position}: ${step.label}`;
  }

  /** The line as it stands now. */
  text(): string {
    const now = this.#now();
    const parts = [this.#stepText()].filter((t) => t !== "");
    if (this.#step) parts.push(seconds(now - this.#stepStartMs));
    if (this.#level !== undefined) {
      const requests = this.#doneRequests + (this.#current?.() ?? 0);
      parts.push(`${this.#level} for ${seconds(now - this.#levelStartMs)}`);
      parts.push(`${requests} requests`);
      if (this.#figures !== "") parts.push(this.#figures);
    }
    return parts.join(" | ");
  }

  #redraw(): void {
    if (this.#live) {
      this.#output.writeSync(encoder.encode(`\r\x1b[2K${this.text()}`));
      this.#shown = true;
      return;
    }
    // Plain lines: a long level says where it is now and then.
    const now = this.#now();
    if (this.#level !== undefined && now - this.#lastPlainMs >= PLAIN_EVERY_MS) {
      this.#lastPlainMs = now;
      this.#plain(this.text());
    }
  }

  #plain(text: string): void {
    if (text !== "") this.#output.writeSync(encoder.encode(`${text}\n`));
  }
}
