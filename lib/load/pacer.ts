/**
 * Dispatches sends at their due times on the absolute monotonic clock
 * (start + schedule offset), never by relative sleeps, so lateness does not
 * accumulate. Between sends the pacer sleeps on an alarm (see alarm.ts:
 * about 0.1 ms late, no busy core) and each wake-up sends every request whose
 * time has come, in one batch.
 */
import type { Schedule } from "./schedule.ts";

/**
 * Sends one request due at `intendedMs` (performance.now() time). Returns
 * false when it cannot send now (no capacity): the pacer then holds that send
 * until resume().
 */
export type Dispatch = (intendedMs: number) => boolean;

/** A one-shot timer; the precise one is Alarm, tests use a fake. */
export interface Wakeup {
  /** Calls `callback` once at or after `atMs`, replacing the previous setting. */
  set(atMs: number, callback: () => void): void;
  clear(): void;
}

export interface PacerOptions {
  /** Wakes the pacer for its next due time. */
  wakeup: Wakeup;
  /** Called once when the schedule has no more sends. */
  onEnd?: () => void;
  /** Milliseconds on the clock the wakeup and the due times use. Default performance.now. */
  now?: () => number;
  /**
   * Wake-ups are set at least this far apart (default 0): a send due sooner
   * after the time of the last wake-up waits for the next one and goes out
   * with every other send due by then. Each wake-up of the alarm costs tens
   * of microseconds of CPU whatever it sends, so batching trades up to this
   * much send lag for a fraction of the wake-ups. The wakeup is never set
   * sooner than this after the time it was last set for (Alarm's restMs).
   */
  batchMs?: number;
}

export class Pacer {
  readonly #schedule: Schedule;
  readonly #dispatch: Dispatch;
  readonly #wakeup: Wakeup;
  readonly #onEnd: (() => void) | undefined;
  readonly #now: () => number;
  readonly #batchMs: number;
  #startMs = 0;
  /** Due time of the next send. */
  #dueMs = 0;
  /** The time the wakeup was last set for. */
  #wakeMs = -Infinity;
  #running = false;
  #paused = false;
  readonly #wake = () => this.#run();

  constructor(schedule: Schedule, dispatch: Dispatch, options: PacerOptions) {
    this.#schedule = schedule;
    this.#dispatch = dispatch;
    this.#wakeup = options.wakeup;
    this.#onEnd = options.onEnd;
    this.#now = options.now ?? (() => performance.now());
    this.#batchMs = options.batchMs ?? 0;
  }

  /** True while sends are held back because dispatch reported no capacity. */
  get paused(): boolean {
    return this.#paused;
  }

  /** Starts pacing with the schedule's offsets counted from `startMs` (default: now). */
  start(startMs = this.#now()): void {
    if (this.#running) throw new Error("The pacer is already running");
    this.#startMs = startMs;
    // The start counts as a wake-up: the first batch collects what falls due in its first batchMs.
    this.#wakeMs = startMs;
    this.#running = true;
    this.#advance();
    this.#run();
  }

  /** Capacity was freed: sends that are due go out now. */
  resume(): void {
    if (!this.#paused || !this.#running) return;
    this.#paused = false;
    this.#run();
  }

  stop(): void {
    this.#running = false;
    this.#paused = false;
    this.#wakeup.clear();
  }

  #advance(): void {
    const offset = this.#schedule.next();
    this.#dueMs = this.#startMs + offset;
    if (offset === Infinity) {
      this.stop();
      this.#onEnd?.();
    }
  }

  #run(): void {
    let now = this.#now();
    while (this.#running && this.#dueMs <= now) {
      if (!this.#dispatch(this.#dueMs)) {
        this.#paused = this.#running;
        return;
      }
      this.#advance();
      // Sending takes time: sends that fell due meanwhile go out in this batch too.
      if (this.#dueMs > now) now = this.#now();
    }
    if (!this.#running) return;
    this.#wakeMs = Math.max(this.#dueMs, this.#wakeMs + this.#batchMs);
    this.#wakeup.set(this.#wakeMs, this.#wake);
  }
}
