/**
 * Dispatches sends at their due times on the absolute monotonic clock
 * (start + schedule offset), never by relative sleeps, so lateness does not
 * accumulate. Timers alone are late by about a millisecond, so the pacer
 * sleeps with a timer until shortly before a due time and then yields to the
 * event loop with setImmediate (I/O keeps running) until the time has come.
 * Every send whose time has come goes out in one batch.
 */
import type { Schedule } from "./schedule.ts";

/** How long before a due time the timer wakes the pacer at least; idle timers fire ~1-2 ms late. */
export const DEFAULT_SPIN_MS = 2;
/**
 * On a busy machine timers fire much later (measured here: p99 18 ms with
 * other processes running), so the wake-up margin follows the lateness seen,
 * up to this bound on the time spent yielding.
 */
const MAX_SPIN_MS = 10;
/** Per wake-up, the margin shrinks by this factor towards the minimum once timers are punctual. */
const MARGIN_DECAY = 0.95;

/**
 * Sends one request due at `intendedMs` (performance.now() time). Returns
 * false when it cannot send now (no capacity): the pacer then holds that send
 * until resume().
 */
export type Dispatch = (intendedMs: number) => boolean;

export interface PacerOptions {
  spinMs?: number;
  /** Called once when the schedule has no more sends. */
  onEnd?: () => void;
}

export class Pacer {
  readonly #schedule: Schedule;
  readonly #dispatch: Dispatch;
  readonly #spinMs: number;
  readonly #onEnd: (() => void) | undefined;
  #startMs = 0;
  /** Due time of the next send, performance.now() milliseconds. */
  #dueMs = 0;
  #running = false;
  #paused = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #immediate: ReturnType<typeof setImmediate> | undefined;
  /** Current wake-up margin before a due time, milliseconds. */
  #marginMs: number;
  /** When the pending timer was meant to fire. */
  #wakeMs = 0;
  readonly #tick = () => {
    this.#timer = undefined;
    this.#immediate = undefined;
    this.#run();
  };
  readonly #wake = () => {
    const lateMs = performance.now() - this.#wakeMs;
    this.#marginMs = Math.min(
      MAX_SPIN_MS,
      Math.max(this.#spinMs, lateMs + this.#spinMs, this.#marginMs * MARGIN_DECAY),
    );
    this.#tick();
  };

  constructor(schedule: Schedule, dispatch: Dispatch, options: PacerOptions = {}) {
    this.#schedule = schedule;
    this.#dispatch = dispatch;
    this.#spinMs = options.spinMs ?? DEFAULT_SPIN_MS;
    this.#marginMs = this.#spinMs;
    this.#onEnd = options.onEnd;
  }

  /** True while sends are held back because dispatch reported no capacity. */
  get paused(): boolean {
    return this.#paused;
  }

  /** Starts pacing with the schedule's offsets counted from `startMs` (default: now). */
  start(startMs = performance.now()): void {
    if (this.#running) throw new Error("The pacer is already running");
    this.#startMs = startMs;
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
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
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
    let now = performance.now();
    while (this.#running && this.#dueMs <= now) {
      if (!this.#dispatch(this.#dueMs)) {
        this.#paused = this.#running;
        return;
      }
      this.#advance();
      // Sending takes time: sends that fell due meanwhile go out in this batch too.
      if (this.#dueMs > now) now = performance.now();
    }
    if (!this.#running) return;
    const wait = this.#dueMs - now;
    if (wait > this.#marginMs) {
      this.#wakeMs = now + wait - this.#marginMs;
      this.#timer = setTimeout(this.#wake, wait - this.#marginMs);
    } else this.#immediate = setImmediate(this.#tick);
  }
}
