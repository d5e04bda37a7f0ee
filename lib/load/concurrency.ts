/**
 * Closed-loop load: N workers, each with its own keep-alive session, send
 * the next request as soon as the previous one completes.
 */
import type { Recorder } from "../measure/recorder.ts";
import { ConnectionError } from "../protocol/errors.ts";
import type {
  InferenceClient,
  InferSession,
  PreparedRequest,
  RequestTiming,
} from "../protocol/types.ts";

/** Pause after a connection failure so a dead server does not turn into a busy loop of errors. */
const CONNECTION_RETRY_MS = 50;

export interface ConcurrencyLoadOptions {
  /** Requests are taken round-robin across workers (the input-data steps). */
  requests: readonly PreparedRequest[];
}

export class ConcurrencyLoad {
  readonly #client: InferenceClient;
  readonly #requests: readonly PreparedRequest[];
  readonly #idle: InferSession[] = [];
  #recorder: Recorder | undefined;
  #next = 0;
  #running = false;
  #budget = Infinity;
  #workers: Promise<void>[] = [];

  constructor(client: InferenceClient, options: ConcurrencyLoadOptions) {
    if (options.requests.length === 0) throw new RangeError("At least one request is needed");
    this.#client = client;
    this.#requests = options.requests;
  }

  /**
   * Starts `concurrency` workers recording into `recorder`. With `limit`, the
   * workers together issue exactly that many requests and then stop.
   */
  start(concurrency: number, options: { recorder: Recorder; limit?: number }): void {
    if (this.#running) throw new Error("The load is already running");
    this.#recorder = options.recorder;
    this.#budget = options.limit ?? Infinity;
    this.#running = true;
    this.#workers = Array.from({ length: concurrency }, () => this.#work(this.#idle.pop()));
  }

  /** Stops issuing requests and waits for the ones in flight. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
    this.#workers = [];
  }

  /** Resolves once every worker has stopped (a `limit` was reached). */
  async drained(): Promise<void> {
    await Promise.all(this.#workers);
  }

  close(): void {
    for (const s of this.#idle) s.close();
    this.#idle.length = 0;
  }

  /** Sessions open lazily so that a refused connection counts as a failed request, not a fatal error. */
  async #work(reused: InferSession | undefined): Promise<void> {
    let session = reused;
    const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const requests = this.#requests;
    while (this.#running && this.#budget > 0) {
      this.#budget--;
      const request = requests[this.#next]!;
      this.#next = (this.#next + 1) % requests.length;
      try {
        session ??= await this.#client.openSession();
        await session.infer(request, timing);
        this.#recorder!.record(timing);
      } catch (e) {
        this.#recorder!.recordError(e instanceof Error ? e.message : String(e));
        if (e instanceof ConnectionError) {
          await new Promise((r) => setTimeout(r, CONNECTION_RETRY_MS));
        }
      }
    }
    if (session) this.#idle.push(session);
  }
}
