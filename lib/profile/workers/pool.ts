/**
 * The main thread's side of --workers N > 1: N Web Workers started from the
 * program's own main module (main.ts from source, the bundle, or the module
 * embedded in a compiled binary), each driving its part of every level
 * (worker.ts). Levels reuse the workers and their connections; the records
 * they send are replayed into the level's Recorder here, so measuring,
 * windows and reports are those of one thread.
 *
 * Window boundaries: a worker's request reaches the Recorder up to one flush
 * interval (worker.ts FLUSH_MS) after it completed, so it may count in the
 * next window; its times themselves are exact on this thread's clock.
 */
import { startAlarmThread } from "../../load/alarm.ts";
import type { ProfilePlan } from "../plan.ts";
import { UsageError } from "../../types/errors.ts";
import { InputError } from "../../input/errors.ts";
import type { LevelLoad } from "../../measure/level.ts";
import type { RequestRecorder } from "../../measure/recorder.ts";
import { ConnectionError, InferError, TimeoutError } from "../../protocol/errors.ts";
import type { ModelInfo } from "../../types/model.ts";
import type { PartStart } from "../../load/levels.ts";
import type { RequestTracer } from "../../report/export.ts";
import { RemoteRequests, replay } from "./records.ts";
import type { FromWorker, ToWorker, WorkerFailure } from "./worker.ts";

/** Open loop: the schedule starts this long after start(), so the message reaches every worker in time. */
const START_MARGIN_MS = 2;

/** The errors main.ts maps to exit codes and one-line messages, rebuilt from a worker's. */
function revive(f: WorkerFailure): Error {
  switch (f.name) {
    case "UsageError":
      return new UsageError(f.message.split("\n"));
    case "InputError":
      return new InputError(f.message);
    case "ConnectionError":
      return new ConnectionError(f.message, "");
    case "InferError":
      return new InferError(f.message, 0);
    case "TimeoutError":
      return new TimeoutError(f.message, 0);
  }
  const error = new Error(f.message);
  if (f.stack) error.stack = f.stack;
  return error;
}

/**
 * Deno loads a worker's file only with read access to it. Asked first (as
 * Deno would, prompting where it may), so that a refusal is one error in
 * Deno's words, which main.ts turns into the flag to add, rather than each
 * worker's uncaught error.
 */
function checkReadable(module: string): void {
  if (!module.startsWith("file:")) return;
  const pathname = decodeURIComponent(new URL(module).pathname);
  const path = Deno.build.os === "windows" ? pathname.slice(1).replaceAll("/", "\\") : pathname;
  if (Deno.permissions.requestSync({ name: "read", path }).state === "granted") return;
  throw new Deno.errors.NotCapable(
    `Requires read access to ${JSON.stringify(path)}, run again with the --allow-read flag`,
  );
}

type Wait = PromiseWithResolvers<void>;

interface Member {
  worker: Worker;
  /** This thread's clock minus the worker's. */
  offsetMs: number;
  /**
   * The worker listens for messages. Sent earlier, a message is lost: the
   * worker's module loads its code with a dynamic import, and a message that
   * arrives meanwhile finds no handler (every run hung with a cold module cache).
   */
  loaded: Wait;
  ready: Wait;
  drained: Wait | undefined;
  stopped: Wait | undefined;
}

function wait(): Wait {
  const w = Promise.withResolvers<void>();
  // A failure rejects every wait, including those nobody awaits yet.
  w.promise.catch(() => {});
  return w;
}

export class WorkerPool {
  readonly #members: Member[];
  #recorder: RequestRecorder | undefined;
  #failure: Error | undefined;
  #serial = 0;
  /** The threads of the workers' open-loop alarms: a worker cannot start them itself. */
  readonly #alarms: Worker[] = [];

  /**
   * Starts `config.workers` workers and waits until each has built its client
   * and requests. `tracer` (the profile export) is told what the workers'
   * clients saw of each request as it is replayed.
   */
  static async open(
    config: ProfilePlan,
    options: { model: ModelInfo; tracer?: RequestTracer },
  ): Promise<WorkerPool> {
    checkReadable(Deno.mainModule);
    const pool = new WorkerPool(config.workers, options.tracer);
    try {
      await Promise.all(pool.#members.map((m) => m.loaded.promise));
      pool.#members.forEach((m, index) =>
        m.worker.postMessage(
          {
            type: "init",
            config,
            model: options.model,
            part: { index, count: config.workers },
            timeOrigin: performance.timeOrigin,
          } satisfies ToWorker,
        )
      );
      await Promise.all(pool.#members.map((m) => m.ready.promise));
    } catch (error) {
      pool.close();
      throw error;
    }
    return pool;
  }

  private constructor(count: number, tracer: RequestTracer | undefined) {
    this.#members = Array.from({ length: count }, (_, index) => this.#spawn(index, tracer));
  }

  /** The load of one level, split between the workers. */
  level(value: number): LevelLoad {
    const members = this.#members;
    return {
      start: ({ recorder, limit }) => {
        if (this.#failure) throw this.#failure;
        this.#recorder = recorder;
        const level: PartStart = {
          value,
          ...(limit === undefined ? {} : { limit }),
          startMs: performance.now() + START_MARGIN_MS,
          serial: ++this.#serial,
        };
        for (const m of members) {
          m.drained = wait();
          m.worker.postMessage({ type: "start", level } satisfies ToWorker);
        }
      },
      drained: () => this.#all((m) => m.drained),
      stop: () => {
        for (const m of members) {
          m.stopped = wait();
          m.worker.postMessage({ type: "stop" } satisfies ToWorker);
        }
        return this.#all((m) => m.stopped);
      },
    };
  }

  close(): void {
    for (const m of this.#members) m.worker.terminate();
    for (const alarm of this.#alarms) alarm.terminate();
    this.#fail(new Error("The load workers were closed"));
  }

  async #all(which: (m: Member) => Wait | undefined): Promise<void> {
    if (this.#failure) throw this.#failure;
    await Promise.all(this.#members.map((m) => which(m)?.promise));
  }

  #spawn(index: number, tracer: RequestTracer | undefined): Member {
    const worker = new Worker(Deno.mainModule, { type: "module" });
    const remote = tracer && new RemoteRequests(tracer);
    const member: Member = {
      worker,
      offsetMs: 0,
      loaded: wait(),
      ready: wait(),
      drained: undefined,
      stopped: undefined,
    };
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      switch (message.type) {
        case "records":
          replay(message.batch, { recorder: this.#recorder!, offsetMs: member.offsetMs, remote });
          return;
        case "loaded":
          member.loaded.resolve();
          return;
        case "ready":
          member.offsetMs = message.timeOrigin - performance.timeOrigin;
          member.ready.resolve();
          return;
        case "drained":
          if (message.serial === this.#serial) member.drained?.resolve();
          return;
        case "stopped":
          member.stopped?.resolve();
          return;
        case "alarm":
          this.#alarms.push(startAlarmThread(message.setup));
          return;
        case "error":
          this.#fail(revive(message.error));
      }
    };
    // An uncaught error (a bug, or a module the worker may not read) ends the run, not the process.
    worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(new Error(`Load worker ${index + 1} failed: ${event.message}`));
    };
    worker.onmessageerror = () => this.#fail(new Error(`Load worker ${index + 1} sent bad data`));
    return member;
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const m of this.#members) {
      for (const w of [m.loaded, m.ready, m.drained, m.stopped]) w?.reject(this.#failure);
    }
  }
}
