/**
 * Open-loop load: sends leave at the times a schedule sets, whether or not
 * earlier requests have been answered. Each in-flight request has a slot
 * with its own keep-alive session (one connection, one request at a time);
 * slots are created as needed up to --max-inflight and reused, so sockets
 * stay bounded. When every slot is busy (or, with --serial-sequences, every
 * sequence has a request in flight) the due sends wait; each one that waited
 * is counted as blocked, and the latency from its intended time shows what
 * the wait cost.
 */
import type { RequestRecorder } from "../measure/recorder.ts";
import type { InferenceClient, InferOptions, InferSession } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";
import type { RequestFeed } from "./feed.ts";
import { Cancellation } from "./_cancel.ts";
import type { CancellationPlan } from "./plan.ts";
import { Abandonment, drain } from "./_drain.ts";
import { PrefillGate, PrefillHold } from "./_prefill.ts";
import { StepTimer } from "./_steps.ts";
import { type ConcurrencySteps, concurrencySteps, rampShape } from "./shape.ts";
import { Alarm, type AlarmOptions } from "./alarm.ts";
import { Pacer } from "./pacer.ts";
import type { Schedule } from "./schedule.ts";

/** The --max-inflight default: room for 1,000 req/s at 1 s latency (Little's law). */
export const DEFAULT_MAX_INFLIGHT = 1000;

/**
 * The --send-batching default, milliseconds: each wake-up of the alarm costs
 * tens of microseconds of CPU, more than the send itself (BENCHMARKS.md).
 */
export const DEFAULT_SEND_BATCH_MS = 0.5;

export interface RateLoadOptions {
  /** A request with a check has its response decoded and validated; a mismatch fails it. */
  feed: RequestFeed;
  /** Requests (and connections) in flight at most. */
  maxInflight: number;
  /** At most one request of a sequence in flight (--serial-sequences). */
  serialSequences?: boolean;
  /** How the pacer's alarm starts its thread (Web Workers need the main thread's help). */
  alarm?: AlarmOptions;
  /** --send-batching: wake-ups at least this far apart, each sending all that is due (Pacer). */
  batchMs?: number;
  /** --stall-timeout: stop() and drained() give up on requests when nothing completed for this long (0 = never). */
  stallMs?: number;
  /** --request-cancellation-rate and -delay: requests cancelled on purpose, counted apart. */
  cancellation?: CancellationPlan;
  /**
   * --prefill-concurrency: at most this many requests waiting for their first
   * response; a due send waits (counted as blocked) until one gets it.
   */
  prefill?: number;
  /** --prefill-concurrency-ramp-duration: that limit ramps up from 1 over this long. */
  prefillRampMs?: number;
  /**
   * AIPerf's --concurrency-ramp-duration with a cap: the in-flight limit
   * ramps from 1, one more at even intervals (AIPerf's steps), over this long.
   */
  capRampMs?: number;
}

const DECODE: InferOptions = { decodeOutputs: true };

/** One in-flight request's state, reused so that a send allocates nothing of its own. */
interface Slot {
  session: InferSession | undefined;
  /** The spare's session while it is being opened. */
  opening: Promise<InferSession> | undefined;
  timing: RequestTiming;
  intendedMs: number;
  lane: number;
  /** A request is in flight on it: giving up closes its session. */
  busy: boolean;
  /** Its request was cancelled on purpose (its session closed). */
  cancelled: boolean;
  /** Cancels its request: made once per slot, so that a cancellation timer allocates nothing. */
  cancel: () => void;
  /** --prefill-concurrency: its hold on the gate. */
  hold: PrefillHold | undefined;
  /** What its sends pass: with and without a check of the outputs. */
  plain: InferOptions | undefined;
  decode: InferOptions;
}

function newSlot(gate: PrefillGate | undefined): Slot {
  const hold = gate && new PrefillHold(gate);
  const slot: Slot = {
    hold,
    plain: hold?.plain,
    decode: hold?.decode ?? DECODE,
    session: undefined,
    opening: undefined,
    timing: { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 },
    intendedMs: 0,
    lane: 0,
    busy: false,
    cancelled: false,
    cancel: () => {
      if (!slot.busy || slot.cancelled) return;
      slot.cancelled = true;
      slot.session?.close();
    },
  };
  return slot;
}

export class RateLoad {
  readonly #client: InferenceClient;
  readonly #feed: RequestFeed;
  readonly #maxInflight: number;
  /** Requests in flight at most now: --max-inflight, or a ramp's step towards it. */
  #cap: number;
  readonly #capSteps: ConcurrencySteps | undefined;
  readonly #capTimer = new StepTimer();
  readonly #serial: boolean;
  readonly #alarmOptions: AlarmOptions | undefined;
  readonly #stallMs: number;
  readonly #batchMs: number;
  readonly #cancellation: Cancellation | undefined;
  readonly #prefill: PrefillGate | undefined;
  readonly #idle: Slot[] = [];
  /** Every slot made (at most --max-inflight), idle, spare or busy. */
  readonly #slots: Slot[] = [];
  readonly #abandonment: Abandonment;
  readonly #lastMs = () => this.#recorder?.lastCompletedMs ?? -Infinity;
  readonly #abandon = () => {
    this.#pacer?.stop();
    this.#exhausted = true;
    this.#abandonment.giveUp();
    for (const slot of this.#slots) if (slot.busy) slot.session?.close();
  };
  /** Serial sequences: 1 while a lane has a request in flight. */
  readonly #laneBusy: Uint8Array;
  /**
   * A slot whose connection opens in the background before any send needs
   * it: a send that finds no idle slot takes it, so connecting (about a
   * millisecond, more for TLS) stays off the send path and out of the send lag.
   */
  #spare: Slot | undefined;
  #inflight = 0;
  #lane = 0;
  #recorder: RequestRecorder | undefined;
  #pacer: Pacer | undefined;
  /** Created by the first start() and kept for every level until close(). */
  #alarm: Alarm | undefined;
  #budget = Infinity;
  /** The abandonment epoch when the load started: another one at its stop means it gave up. */
  #startEpoch = 0;
  /** The schedule (or the limit) has no more sends. */
  #exhausted = false;
  /** When capacity last returned after sends were held: sends due before then were blocked. */
  #resumedMs = -Infinity;
  #settled: PromiseWithResolvers<void> | undefined;
  readonly #dispatch = (intendedMs: number): boolean => this.#send(intendedMs);
  readonly #onEnd = (): void => {
    this.#exhausted = true;
    this.#checkSettled();
  };

  constructor(client: InferenceClient, options: RateLoadOptions) {
    if (!(Number.isInteger(options.maxInflight) && options.maxInflight >= 1)) {
      throw new RangeError(`Invalid in-flight limit "${options.maxInflight}": expected >= 1`);
    }
    this.#client = client;
    this.#feed = options.feed;
    this.#maxInflight = options.maxInflight;
    this.#cap = options.maxInflight;
    const rampMs = options.capRampMs;
    this.#capSteps = rampMs === undefined ? undefined : concurrencySteps(
      rampShape(options.maxInflight, { durationMs: rampMs, strategy: "linear", start: 1 }),
    );
    this.#serial = (options.serialSequences ?? false) && options.feed.sequences;
    this.#laneBusy = new Uint8Array(options.feed.lanes);
    this.#alarmOptions = options.alarm;
    this.#stallMs = options.stallMs ?? 0;
    this.#abandonment = new Abandonment(this.#stallMs);
    this.#batchMs = options.batchMs ?? 0;
    this.#cancellation = options.cancellation && new Cancellation(options.cancellation);
    if (options.prefill !== undefined) {
      this.#prefill = new PrefillGate(options.prefill, { rampMs: options.prefillRampMs });
      // Not from inside the answer that handed the permit back: its parser is still running.
      this.#prefill.onFree = () => queueMicrotask(() => this.#resume());
    }
  }

  /** Requests in flight now. */
  get inflight(): number {
    return this.#inflight;
  }

  /**
   * Starts sending on `schedule` from now, recording into `recorder`. With
   * `limit`, exactly that many requests are sent.
   */
  start(schedule: Schedule, options: { recorder: RequestRecorder; limit?: number }): void {
    if (this.#pacer) throw new Error("The load is already running");
    this.#recorder = options.recorder;
    this.#budget = options.limit ?? Infinity;
    this.#startEpoch = this.#abandonment.epoch;
    this.#exhausted = this.#budget <= 0;
    this.#resumedMs = -Infinity;
    this.#settled = Promise.withResolvers();
    this.#pacer = new Pacer(schedule, this.#dispatch, {
      wakeup: this.#startAlarm(),
      onEnd: this.#onEnd,
      batchMs: this.#batchMs,
    });
    this.#ensureSpare();
    this.#prefill?.begin();
    const capSteps = this.#capSteps;
    if (capSteps !== undefined) {
      this.#cap = capSteps.initial;
      void this.#capTimer.follow(capSteps, (n) => {
        this.#cap = n;
        this.#resume();
      });
    }
    if (!this.#exhausted) this.#pacer.start();
    this.#checkSettled();
  }

  /** Cancels every request in flight (the end of --benchmark-grace-period): each counts as cancelled. */
  cancelInflight(): void {
    for (const slot of this.#slots) slot.cancel();
  }

  /**
   * Stops sending and waits for the requests in flight (given up on after a
   * stall); then each sequence under way gets its last request, with the END
   * flag, and that is waited for too.
   */
  async stop(): Promise<void> {
    this.#prefill?.end();
    this.#capTimer.stop();
    this.#pacer?.stop();
    this.#exhausted = true;
    this.#checkSettled();
    await this.drained();
    await this.#endSequences();
    this.#pacer = undefined;
  }

  async #endSequences(): Promise<void> {
    const feed = this.#feed;
    // Not after giving up on the server: it stopped answering.
    if (feed.endSequence === undefined || this.#abandonment.epoch !== this.#startEpoch) return;
    const lanes = [...this.#laneBusy.keys()].filter((lane) => feed.endSequence!(lane));
    if (lanes.length === 0) return;
    this.#settled = Promise.withResolvers();
    const now = performance.now();
    for (const lane of lanes) this.#sendOn(lane, now);
    await this.drained();
  }

  /**
   * Resolves once the schedule or the limit is exhausted and every request
   * completed, or the load gave up on them after a stall.
   */
  async drained(): Promise<void> {
    if (this.#settled === undefined) return;
    await drain(this.#settled.promise, {
      lastMs: this.#lastMs,
      stallMs: this.#stallMs,
      abandon: this.#abandon,
    });
  }

  /**
   * Opens the first connection and starts the alarm's thread before the
   * first level, so that its first sends wait for neither. Never fails: an
   * unreachable server is reported by the sends.
   */
  async prepare(): Promise<void> {
    this.#startAlarm();
    this.#ensureSpare();
    await this.#spare?.opening?.catch(() => {});
  }

  /** The alarm, started once per load: its thread takes a while to start. */
  #startAlarm(): Alarm {
    // The pacer never sets it sooner than a batch after its last wake-up.
    return this.#alarm ??= new Alarm({ ...this.#alarmOptions, restMs: this.#batchMs });
  }

  close(): void {
    this.#alarm?.close();
    this.#alarm = undefined;
    for (const slot of this.#idle) slot.session?.close();
    this.#idle.length = 0;
    this.#spare?.opening?.then((session) => session.close(), () => {});
    this.#spare = undefined;
    this.#slots.length = 0;
  }

  /** Starts opening a spare connection when no slot is idle and the limit leaves room. */
  #ensureSpare(): void {
    if (
      this.#idle.length > 0 || this.#spare !== undefined ||
      this.#slots.length >= this.#maxInflight
    ) {
      return;
    }
    const spare = newSlot(this.#prefill);
    this.#slots.push(spare);
    this.#spare = spare;
    const opening = this.#client.openSession();
    spare.opening = opening;
    // A spare taken meanwhile is the send's, which awaits `opening` itself.
    opening.then((session) => {
      if (this.#spare !== spare) return;
      spare.session = session;
      spare.opening = undefined;
      this.#spare = undefined;
      this.#idle.push(spare);
    }, () => {
      // Dropped: the send that needs a connection next tries again and reports what fails.
      if (this.#spare !== spare) return;
      this.#spare = undefined;
      this.#slots.splice(this.#slots.indexOf(spare), 1);
    });
  }

  #send(intendedMs: number): boolean {
    // Every slot busy: the requests in flight are the slots in use (at most --max-inflight).
    if (this.#inflight >= this.#cap) return false;
    if (this.#prefill?.full) return false;
    const lane = this.#takeLane();
    if (lane < 0) return false;
    this.#sendOn(lane, intendedMs);
    return true;
  }

  #sendOn(lane: number, intendedMs: number): void {
    let slot = this.#idle.pop();
    if (slot === undefined && this.#spare !== undefined) {
      slot = this.#spare;
      this.#spare = undefined;
    }
    if (slot === undefined) {
      slot = newSlot(this.#prefill);
      this.#slots.push(slot);
    }
    if (slot.hold !== undefined) {
      slot.hold.gate.take();
      slot.hold.begin();
    }
    slot.intendedMs = intendedMs;
    slot.lane = lane;
    slot.busy = true;
    this.#inflight++;
    if (--this.#budget <= 0) {
      this.#exhausted = true;
      this.#pacer!.stop();
    }
    this.#run(slot);
    this.#ensureSpare();
  }

  /** The lane of the next send, or -1 when serial sequences all have a request in flight. */
  #takeLane(): number {
    const lanes = this.#laneBusy.length;
    if (!this.#serial) {
      const lane = this.#lane;
      this.#lane = (lane + 1) % lanes;
      return lane;
    }
    for (let i = 0; i < lanes; i++) {
      const lane = (this.#lane + i) % lanes;
      if (this.#laneBusy[lane] === 0) {
        this.#laneBusy[lane] = 1;
        this.#lane = (lane + 1) % lanes;
        return lane;
      }
    }
    return -1;
  }

  async #run(slot: Slot): Promise<void> {
    const recorder = this.#recorder!;
    const { intendedMs, lane } = slot;
    const abandonment = this.#abandonment;
    const epoch = abandonment.epoch;
    const blocked = intendedMs <= this.#resumedMs;
    let sent = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const request = this.#feed.next(lane);
      if (slot.session === undefined) {
        const opening = slot.opening ?? this.#client.openSession();
        slot.opening = undefined;
        slot.session = await opening;
      }
      sent = true;
      recorder.recordSend(intendedMs, performance.now(), blocked);
      const check = this.#feed.check(request);
      const cancellation = this.#cancellation;
      if (cancellation?.draw()) timer = setTimeout(slot.cancel, cancellation.delayMs);
      const outputs = await slot.session.infer(
        request,
        slot.timing,
        check ? slot.decode : slot.plain,
      );
      // Given up on meanwhile (an API that cannot cancel answers late): failed as abandoned.
      const mismatch = abandonment.of(epoch) ?? check?.(outputs ?? []);
      if (slot.cancelled) recorder.recordCancelled();
      else if (mismatch === undefined) recorder.record(slot.timing, intendedMs);
      else recorder.recordError(mismatch, slot.timing);
    } catch (e) {
      // A refused connection still counts as a send that left (and failed) now.
      if (!sent) recorder.recordSend(intendedMs, performance.now(), blocked);
      // A sent request's timing dates it in the export.
      if (slot.cancelled) recorder.recordCancelled();
      else recorder.recordError(abandonment.failure(epoch, e), sent ? slot.timing : undefined);
    }
    if (timer !== undefined) clearTimeout(timer);
    slot.hold?.end();
    slot.busy = false;
    if (slot.cancelled) {
      // Its connection was closed under it: the next request opens another.
      slot.cancelled = false;
      slot.session = undefined;
    }
    // Sessions closed when the requests were given up on are not reused.
    if (abandonment.of(epoch) !== undefined) slot.session = undefined;
    this.#idle.push(slot);
    if (this.#serial) this.#laneBusy[lane] = 0;
    this.#inflight--;
    this.#resume();
    this.#checkSettled();
  }

  /** Capacity came back: sends held back go out, and those due until now were blocked. */
  #resume(): void {
    const pacer = this.#pacer;
    if (pacer?.paused) {
      this.#resumedMs = performance.now();
      pacer.resume();
    }
  }

  #checkSettled(): void {
    if (this.#exhausted && this.#inflight === 0) this.#settled?.resolve();
  }
}
