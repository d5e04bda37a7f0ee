/**
 * A load worker thread (--workers N > 1): main.ts runs serveLoadWorker()
 * when it finds itself started as a Web Worker by pool.ts. The worker
 * builds its own client and requests from the cloned configuration and
 * model, drives its part of each level (lib/load/levels.ts planPart, the code the
 * main thread runs without workers) and sends what
 * completed in batches (records.ts), every FLUSH_MS and before it reports
 * "drained" or "stopped", so the main thread has every record by then.
 *
 * Messages in: init, then start / stop for each level (see ToWorker).
 * Messages out: loaded, ready, records, drained, stopped, alarm, error (see FromWorker).
 */
import type { AlarmSetup } from "../../load/alarm.ts";
import type { ProfilePlan } from "../plan.ts";
import type { Part } from "../../load/split.ts";
import type { ModelInfo } from "../../types/model.ts";
import { type PartLoad, type PartStart, planPart } from "../../load/levels.ts";
import { buildServiceRequests, createClient } from "../../protocol/kinds/mod.ts";
import { loadInputs } from "../inputs.ts";
import { RecordBatch, type RecordMessage } from "./records.ts";

/**
 * How often records leave while a level runs: a request completed in a
 * worker is seen by the main thread's windows at most this much later.
 */
const FLUSH_MS = 5;

export type ToWorker =
  | { type: "init"; config: ProfilePlan; model: ModelInfo; part: Part; timeOrigin: number }
  /** `level.startMs` is on the main thread's clock. */
  | { type: "start"; level: PartStart }
  | { type: "stop" };

/** An error as it crosses the thread boundary (structured cloning keeps no custom class). */
export interface WorkerFailure {
  name: string;
  message: string;
  stack?: string;
}

export type FromWorker =
  /** Listening: the pool sends nothing before (see pool.ts). */
  | { type: "loaded" }
  | { type: "ready"; timeOrigin: number }
  | { type: "records"; batch: RecordMessage }
  /** `serial`: of the start whose load drained (a level without limit drains when stopped). */
  | { type: "drained"; serial: number }
  | { type: "stopped" }
  | { type: "error"; error: WorkerFailure }
  /** Start the thread of an open-loop alarm of this worker's (see lib/load/alarm.ts). */
  | { type: "alarm"; setup: AlarmSetup };

interface WorkerScope {
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
}

function failure(error: unknown): WorkerFailure {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  return {
    name: error.name,
    message: error.message,
    ...(error.stack ? { stack: error.stack } : {}),
  };
}

export function serveLoadWorker(): void {
  const scope = self as unknown as WorkerScope;
  const post = (message: FromWorker) => scope.postMessage(message);
  const flush = () => {
    if (batch.size === 0) return;
    const records = batch.take();
    const seen = records.seen;
    scope.postMessage(
      { type: "records", batch: records },
      seen ? [records.rows.buffer, seen.numbers.buffer, seen.bytes.buffer] : [records.rows.buffer],
    );
  };
  let batch = new RecordBatch(flush);
  let load: PartLoad | undefined;
  /** The main thread's clock minus this thread's. */
  let mainOffsetMs = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const handle = async (message: ToWorker): Promise<void> => {
    switch (message.type) {
      case "init": {
        const { config, model, part } = message;
        let client = await createClient(config);
        if (config.profileExportFile !== undefined) {
          // The export's own client wrapper notes what each request sent and got; this writer
          // writes nothing: its seen() travels with the records to the main thread's.
          const { ProfileExportWriter } = await import("../../report/export.ts");
          const observer = new ProfileExportWriter(config.profileExportFile);
          client = observer.wrapClient(client);
          batch = new RecordBatch(flush, { seen: (timing) => observer.seen(timing) });
        }
        const plan = await buildServiceRequests(model, config);
        const inputs = loadInputs(client, { config, model, plan });
        const alarm = {
          spawn: (setup: AlarmSetup & { port: MessagePort }) =>
            scope.postMessage({ type: "alarm", setup }, [setup.port]),
        };
        load = await planPart(client, { plan: config, model, part, alarm, ...inputs });
        mainOffsetMs = message.timeOrigin - performance.timeOrigin;
        post({ type: "ready", timeOrigin: performance.timeOrigin });
        return;
      }
      case "start": {
        const level = message.level;
        load!.start({ ...level, startMs: level.startMs + mainOffsetMs }, batch);
        clearInterval(timer);
        timer = setInterval(flush, FLUSH_MS);
        await load!.drained();
        flush();
        post({ type: "drained", serial: level.serial });
        return;
      }
      case "stop":
        await load!.stop();
        clearInterval(timer);
        flush();
        post({ type: "stopped" });
    }
  };
  scope.onmessage = (event) => {
    handle(event.data).catch((error) => post({ type: "error", error: failure(error) }));
  };
  post({ type: "loaded" });
}
