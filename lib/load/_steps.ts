/**
 * Follows a shape's concurrency steps (shape.ts) on a timer: the closed
 * loop's lanes, the prefill gate's limit and the open loop's cap change at
 * their times from each start. Timers only: nothing per request.
 */
import type { ConcurrencySteps } from "./shape.ts";

export class StepTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #done: (() => void) | undefined;

  /** Calls `set` with each step's value at its time from now; resolves after the last, or at stop(). */
  follow(steps: ConcurrencySteps, set: (value: number) => void): Promise<void> {
    this.stop();
    const startMs = performance.now();
    const list = steps.steps;
    let i = 0;
    return new Promise((resolve) => {
      this.#done = resolve;
      const next = () => {
        for (; i < list.length && startMs + list[i].atMs <= performance.now(); i++) {
          set(list[i].value);
        }
        if (i === list.length) return this.stop();
        this.#timer = setTimeout(next, Math.max(0, startMs + list[i].atMs - performance.now()));
      };
      next();
    });
  }

  /** No more steps: the timer stops and follow() resolves. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const done = this.#done;
    this.#done = undefined;
    done?.();
  }
}
