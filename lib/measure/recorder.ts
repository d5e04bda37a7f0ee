/**
 * Collects completed requests into the current window. A request belongs to
 * the window in which its last response arrived, so windows can be rotated at
 * any moment without waiting for in-flight requests (they carry over).
 */
import type { RequestTiming } from "../protocol/types.ts";
import type { WindowData } from "./types.ts";

/** Distinct error messages kept per window; the rest are grouped so a flood of unique messages stays bounded. */
const MAX_ERROR_KINDS = 50;
const OTHER_ERRORS = "(other errors)";

function emptyWindow(startMs: number): WindowData {
  return {
    startMs,
    endMs: startMs,
    startWallNs: BigInt(Math.round((performance.timeOrigin + startMs) * 1e6)),
    latenciesUs: [],
    sendUsSum: 0,
    recvUsSum: 0,
    waitUsSum: 0,
    responseCount: 0,
    errorCount: 0,
    errors: new Map(),
    delayedCount: 0,
  };
}

export class Recorder {
  #window: WindowData = emptyWindow(performance.now());
  #target = Infinity;
  #onTarget: (() => void) | undefined;

  /** Valid requests recorded in the current window so far. */
  get count(): number {
    return this.#window.latenciesUs.length;
  }

  /** Requests (valid or failed) completed in the current window so far. */
  get completed(): number {
    return this.#window.latenciesUs.length + this.#window.errorCount;
  }

  record(timing: RequestTiming): void {
    const w = this.#window;
    w.latenciesUs.push((timing.end - timing.start) * 1000);
    w.sendUsSum += (timing.sendEnd - timing.start) * 1000;
    w.waitUsSum += (timing.recvStart - timing.sendEnd) * 1000;
    w.recvUsSum += (timing.end - timing.recvStart) * 1000;
    w.responseCount += timing.responses;
    this.#check();
  }

  recordError(message: string): void {
    const w = this.#window;
    w.errorCount++;
    const key = w.errors.has(message) || w.errors.size < MAX_ERROR_KINDS ? message : OTHER_ERRORS;
    w.errors.set(key, (w.errors.get(key) ?? 0) + 1);
    this.#check();
  }

  /** Resolves once `count` requests (valid or failed) completed in the current window. */
  waitForCompleted(count: number): Promise<void> {
    return new Promise((resolve) => {
      this.#target = count;
      this.#onTarget = resolve;
      this.#check();
    });
  }

  /** Ends the current window now and starts the next one where it ended. */
  rotate(): WindowData {
    const now = performance.now();
    const done = this.#window;
    done.endMs = now;
    this.#window = emptyWindow(now);
    this.#target = Infinity;
    this.#onTarget?.();
    this.#onTarget = undefined;
    return done;
  }

  #check(): void {
    if (this.completed >= this.#target) {
      const resolve = this.#onTarget;
      this.#target = Infinity;
      this.#onTarget = undefined;
      resolve?.();
    }
  }
}
