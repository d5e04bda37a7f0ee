/**
 * A one-shot timer precise to about 0.1 ms that does not keep a core busy.
 * Deno's timers fire 1-2 ms late (a 1 ms setTimeout returns after ~2.1 ms),
 * too coarse for sends every 0.2 ms, and spinning on setImmediate until a due
 * time costs a whole core. Here a worker thread sleeps in Atomics.wait, whose
 * timeout the kernel keeps to tens of microseconds, and wakes the main thread
 * with Atomics.notify, which resolves an Atomics.waitAsync there; the main
 * event loop keeps serving I/O meanwhile. Until the worker has started, the
 * alarm polls with setImmediate.
 *
 * Inside a Web Worker (the load threads of --workers) neither works: Deno
 * does not wake a worker's event loop when an Atomics.waitAsync resolves (it
 * settles only when something else wakes the loop, such as its timeout), and
 * a worker started from a worker took 0.5-1 s to run. There the alarm's
 * thread is started by the main thread on request (`spawn`) and wakes its
 * owner with a message on a MessagePort (~35 µs p50, ~0.2 ms p99).
 */
import type { Wakeup } from "./pacer.ts";

/** Int32 slots of the shared state. */
/** Bumped by every set() and clear(): the worker sleeps until the due time or a change. */
const ARMED = 0;
/** The ARMED value the worker last fired for: the main thread waits for a change. */
const FIRED = 1;
/** 0 starting, 1 running, 2 closed. */
const STATE = 2;
const RUNNING = 1;
const CLOSED = 2;
/** 1 while the thread rests after firing, until the time in the REST_END slot. */
const RESTING = 3;
/**
 * Byte offset of the float64 times, main-thread performance.now()
 * milliseconds: the due time, then the end of the rest.
 */
const TIMES_OFFSET = 16;
const DUE = 0;
const REST_END = 1;
const BYTES = 32;

/**
 * The worker's whole program, sent as a data: URL so that bundles and
 * compiled binaries need no extra file. Self-contained: it is serialized with
 * Function.prototype.toString, so it uses literals, not the constants above.
 */
function alarmWorker(): void {
  addEventListener("message", (event) => {
    const { buffer, originMs, port, restMs } = (event as MessageEvent).data;
    const state = new Int32Array(buffer, 0, 4);
    // [0]: the due time; [1]: the end of the rest after the last firing.
    const times = new Float64Array(buffer, 16, 2);
    // Main-thread time = worker time + shift.
    const shiftMs = performance.timeOrigin - originMs;
    let fired = NaN;
    Atomics.store(state, 2, 1);
    while (Atomics.load(state, 2) === 1) {
      const armed = Atomics.load(state, 0);
      if (armed === fired) {
        // Nothing set since firing: rest, then wait for a setting.
        const left = times[1] - (performance.now() + shiftMs);
        if (left > 0) {
          Atomics.store(state, 3, 1);
          Atomics.wait(state, 0, armed, left);
          Atomics.store(state, 3, 0);
        } else {
          Atomics.wait(state, 0, armed);
        }
        continue;
      }
      const due = times[0];
      const waitMs = due - (performance.now() + shiftMs);
      if (waitMs > 0) {
        Atomics.wait(state, 0, armed, waitMs);
        continue;
      }
      fired = armed;
      // Written before the RESTING flag that makes the owner read it.
      times[1] = due + restMs;
      Atomics.store(state, 1, armed);
      Atomics.notify(state, 1);
      port?.postMessage(armed);
    }
    port?.close();
    close();
  });
}

const WORKER_URL = `data:text/javascript,${encodeURIComponent(`(${alarmWorker})();`)}`;

/** What an alarm's thread is started with: its shared state, its owner's clock, its wake-up port. */
export interface AlarmSetup {
  buffer: SharedArrayBuffer;
  /** performance.timeOrigin of the thread that owns the alarm: due times are on its clock. */
  originMs: number;
  /** AlarmOptions.restMs. */
  restMs: number;
  /** Given when the owner is woken by messages instead of Atomics.waitAsync. */
  port?: MessagePort;
}

/** Starts an alarm's thread (a Worker of the calling thread's). */
export function startAlarmThread(setup: AlarmSetup): Worker {
  const worker = new Worker(WORKER_URL, { type: "module" });
  // Without the thread the alarm keeps polling: slower, still correct.
  worker.onerror = (event) => event.preventDefault();
  worker.postMessage(setup, setup.port ? [setup.port] : []);
  return worker;
}

export interface AlarmOptions {
  /**
   * The owner promises not to set the alarm sooner than this after a due
   * time it fired for (as the pacer's send batching does). The thread then
   * sleeps through that rest, and a setting at or after its end needs no
   * signal to wake it: one wake-up of the thread per firing instead of two.
   * Default 0.
   */
  restMs?: number;
  /**
   * Has another thread start the alarm's thread (with startAlarmThread) and
   * makes it wake this one by message: for alarms inside Web Workers.
   * Default: this thread starts it and is woken through Atomics.waitAsync.
   */
  spawn?: (setup: AlarmSetup & { port: MessagePort }) => void;
}

export class Alarm implements Wakeup {
  readonly #state: Int32Array;
  readonly #times: Float64Array;
  /** The alarm's thread, when this thread started it. */
  readonly #worker: Worker | undefined;
  /** Where the alarm's thread wakes this one, when it wakes it by message. */
  readonly #port: MessagePort | undefined;
  #callback: () => void = () => {};
  /** The ARMED value of the current setting. */
  #armed = 0;
  /** FIRED when last looked at. */
  #fired = 0;
  #set = false;
  /** A waitAsync or setImmediate poll is pending. */
  #waiting = false;
  #closed = false;
  readonly #check = () => {
    this.#waiting = false;
    this.#fired = Atomics.load(this.#state, FIRED);
    if (this.#closed || !this.#set) return;
    if (performance.now() >= this.#times[DUE]) {
      this.#set = false;
      this.#callback();
      return;
    }
    // Either the worker fired for an earlier setting (this one's wake-up is still to come), or
    // for this one a few microseconds early: its clock is the same but read through another
    // time origin. Before the worker runs, the alarm polls.
    if (this.#fired !== this.#armed && Atomics.load(this.#state, STATE) === RUNNING) this.#wait();
    else this.#poll();
  };

  constructor(options: AlarmOptions = {}) {
    const buffer = new SharedArrayBuffer(BYTES);
    this.#state = new Int32Array(buffer, 0, 4);
    this.#times = new Float64Array(buffer, TIMES_OFFSET, 2);
    this.#times[DUE] = Infinity;
    const setup = { buffer, originMs: performance.timeOrigin, restMs: options.restMs ?? 0 };
    if (options.spawn === undefined) {
      this.#worker = startAlarmThread(setup);
      return;
    }
    const channel = new MessageChannel();
    this.#port = channel.port1;
    this.#port.onmessage = () => {
      if (this.#waiting) this.#check();
    };
    options.spawn({ ...setup, port: channel.port2 });
  }

  /** Calls back at `atMs` (performance.now() time), replacing the previous setting. */
  set(atMs: number, callback: () => void): void {
    if (this.#closed) return;
    this.#callback = callback;
    this.#times[DUE] = atMs;
    this.#set = true;
    this.#armed = this.#arm(atMs);
    if (this.#waiting) return;
    if (Atomics.load(this.#state, STATE) === RUNNING) this.#wait();
    else this.#poll();
  }

  clear(): void {
    if (!this.#set) return;
    this.#set = false;
    this.#times[DUE] = Infinity;
    this.#arm(-Infinity);
  }

  /** Ends the worker; the alarm is unusable afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#set = false;
    Atomics.store(this.#state, STATE, CLOSED);
    this.#arm(-Infinity);
    // Settles a pending waitAsync.
    Atomics.notify(this.#state, FIRED);
    this.#worker?.terminate();
    this.#port?.close();
  }

  /**
   * Tells the worker about a new setting due at `atMs`; returns its ARMED
   * value. A worker resting until `atMs` or sooner finds it when it wakes.
   */
  #arm(atMs: number): number {
    // Wraps as the Int32 slot does, so that it stays comparable with FIRED.
    const armed = (Atomics.add(this.#state, ARMED, 1) + 1) | 0;
    // No wake-up is lost: the flag is read after ARMED changed, and the thread lowers it before
    // reading ARMED again, so a thread seen resting will see this setting when its rest ends,
    // and one that stopped resting is signalled. The rest's end was written before the flag.
    const resting = Atomics.load(this.#state, RESTING) === 1 && atMs >= this.#times[REST_END];
    if (!resting) Atomics.notify(this.#state, ARMED);
    return armed;
  }

  #wait(): void {
    this.#waiting = true;
    if (this.#port !== undefined) {
      // The thread's next message calls back, unless it fired already.
      if (Atomics.load(this.#state, FIRED) !== this.#fired) setImmediate(this.#check);
      return;
    }
    const wait = Atomics.waitAsync(this.#state, FIRED, this.#fired);
    // Already fired: still call back asynchronously, never from inside set().
    if (wait.async) wait.value.then(this.#check);
    else setImmediate(this.#check);
  }

  #poll(): void {
    this.#waiting = true;
    setImmediate(this.#check);
  }
}
