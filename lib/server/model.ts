/**
 * One simulated model version: request validation (Triton's messages), a FIFO
 * scheduler over N instances with optional dynamic batching, simulated compute
 * time, and Triton-style statistics. Independent of any transport.
 */
import type { Tensor } from "../types/tensor.ts";
import { elementCount, elementSize } from "../types/datatype.ts";
import { decodeBytesElements } from "../input/codec.ts";
import type { ComputeDistribution, ModelSpec } from "./config.ts";
import { type Behaviour, createBehaviour, type SequenceState } from "./behaviour.ts";
import { ServerError } from "./errors.ts";
import { Faults } from "./faults.ts";
import { ModelStats } from "./statistics.ts";
import { blsCall } from "./_bls.ts";

/** Time source; tests substitute a fake one to check the schedule exactly. */
export interface Clock {
  /** Milliseconds on the performance.now() timeline. */
  now(): number;
  /** Returns a function that cancels the timer. */
  setTimer(callback: () => void, delayMs: number): () => void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer: (callback, delayMs) => {
    // Deno's timers count from the event loop's cached time, so one can fire up to a
    // millisecond early by performance.now(): re-armed for the rest, a simulated delay
    // is never shorter than configured (tests check latencies against it).
    const due = performance.now() + delayMs;
    let id: ReturnType<typeof setTimeout>;
    const fire = () => {
      const left = due - performance.now();
      if (left > 0) id = setTimeout(fire, left);
      else callback();
    };
    id = setTimeout(fire, delayMs);
    return () => clearTimeout(id);
  },
};

/** Receives the busy time of every execution (simulated GPU utilization). */
export interface LoadSink {
  /** The device an instance runs on. */
  assign(): number;
  addBusy(device: number, ms: number): void;
}

export interface ModelOptions {
  clock?: Clock;
  /** Uniform [0, 1) source for compute-time distributions. */
  random?: () => number;
  load?: LoadSink;
  /** A loaded model by name, for a BLS model's calls (throws a not_found ServerError). */
  resolve?: (name: string) => SimulatedModel;
}

/** One inference request as every front end hands it to the core. */
export interface CoreRequest {
  /** Request id ("" when absent); error messages name it as Triton does. */
  id: string;
  inputs: readonly Tensor[];
  /** Output names; empty means all outputs. */
  outputs: readonly string[];
  /** performance.now() when the request started to arrive. */
  arrival: number;
  /** The sequence_id, sequence_start and sequence_end request parameters, when given. */
  sequence?: SequenceFlags;
}

export interface SequenceFlags {
  /** Correlation id: an unsigned integer or a string; 0 and "" mean none. */
  id: number | bigint | string;
  start: boolean;
  end: boolean;
}

/** A live sequence of a sequence model. */
interface Sequence {
  lastSeen: number;
  state: SequenceState;
}

interface Job {
  request: CoreRequest;
  batch: number;
  /** Inputs in model order. */
  inputs: Tensor[];
  outputs: readonly number[];
  enqueued: number;
  /** The state of the request's sequence (sequence models). */
  sequence: SequenceState | undefined;
  resolve(outputs: Tensor[]): void;
  reject(error: ServerError): void;
}

/** An instance and the execution it is running. */
interface Instance {
  device: number;
  /** Planned end of the last execution; the next starts there, so late timers do not drift. */
  freeAt: number;
  cancel: () => void;
  jobs: Job[];
  /** Start of the current execution (on the planned timeline). */
  start: number;
  /** Sampled compute time of the current execution. */
  inferMs: number;
}

function sampler(compute: number | ComputeDistribution, random: () => number): () => number {
  if (typeof compute === "number") return () => compute;
  const { mean_ms: mean, min_ms: min = 0, max_ms: max = Infinity } = compute;
  const clamp = (v: number) => Math.min(max, Math.max(min, v));
  switch (compute.dist) {
    case "uniform": {
      const half = compute.stddev_ms === undefined ? mean : compute.stddev_ms * Math.sqrt(3);
      return () => clamp(mean + (2 * random() - 1) * half);
    }
    case "normal": {
      const stddev = compute.stddev_ms ?? 0;
      // Box-Muller; 1 - random() keeps the logarithm finite.
      return () =>
        clamp(
          mean +
            stddev * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()),
        );
    }
    case "exponential":
      return () => clamp(-mean * Math.log(1 - random()));
  }
}

function noop(): void {}

function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

function shuttingDown(): ServerError {
  return new ServerError("Server is shutting down", "unavailable");
}

export class SimulatedModel {
  readonly stats = new ModelStats();
  readonly #behaviour: Behaviour;
  readonly #clock: Clock;
  readonly #load: LoadSink | undefined;
  readonly #resolve: ((name: string) => SimulatedModel) | undefined;
  readonly #computeMs: () => number;
  readonly #allOutputs: readonly number[];
  readonly #idle: Instance[] = [];
  readonly #busy = new Set<Instance>();
  readonly #faults: Faults | undefined;
  /** Live sequences by correlation id (ids up to 2^53 as numbers). */
  readonly #sequences = new Map<number | bigint | string, Sequence>();
  #lastSweep = 0;
  #queue: Job[] = [];
  #head = 0;
  #cancelBatchTimer: (() => void) | undefined;
  #closed = false;

  constructor(readonly spec: ModelSpec, readonly version: string, options: ModelOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#load = options.load;
    this.#resolve = options.resolve;
    this.#behaviour = createBehaviour(spec);
    this.#computeMs = sampler(spec.compute, options.random ?? Math.random);
    if (spec.faults) this.#faults = new Faults(spec.faults, options.random ?? Math.random);
    this.#allOutputs = spec.outputs.map((_, i) => i);
    for (let i = 0; i < spec.instances; i++) {
      this.#idle.push({
        device: this.#load?.assign() ?? 0,
        freeAt: 0,
        cancel: noop,
        jobs: [],
        start: 0,
        inferMs: 0,
      });
    }
  }

  get name(): string {
    return this.spec.name;
  }

  /** Requests waiting for an instance. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Validates and schedules a request; rejects with a ServerError. */
  infer(request: CoreRequest): Promise<Tensor[]> {
    if (this.#closed) return Promise.reject(shuttingDown());
    const { promise, resolve, reject } = Promise.withResolvers<Tensor[]>();
    const job: Job = {
      request,
      batch: 1,
      inputs: new Array<Tensor>(this.spec.inputs.length),
      outputs: this.#allOutputs,
      enqueued: 0,
      sequence: undefined,
      resolve,
      reject,
    };
    this.#faults?.arrive(this.#clock.now());
    try {
      this.#validate(job);
      if (this.spec.sequence) job.sequence = this.#track(request);
      if (this.#faults?.fails()) {
        throw new ServerError("Injected fault: the request failed (faults.error_rate)", "internal");
      }
    } catch (error) {
      this.stats.fail.add(this.#clock.now() - request.arrival);
      return Promise.reject(error);
    }
    this.#queue.push(job);
    this.#dispatch();
    return promise;
  }

  /** Fails queued and running requests and stops every timer. */
  close(): void {
    this.#closed = true;
    this.#cancelBatchTimer?.();
    const error = shuttingDown();
    for (const instance of this.#busy) {
      instance.cancel();
      for (const job of instance.jobs) job.reject(error);
    }
    for (let i = this.#head; i < this.#queue.length; i++) this.#queue[i].reject(error);
    this.#busy.clear();
    this.#queue = [];
    this.#head = 0;
  }

  /**
   * A refusal from Triton's request normalization, which names the request id
   * (`<id_unknown>` without one); lookups of tensor names and the sequence
   * batcher's checks do not (see tests/triton_parity_test.ts).
   */
  #error(request: CoreRequest, message: string): ServerError {
    return new ServerError(
      `[request id: ${request.id === "" ? "<id_unknown>" : request.id}] ${message}`,
      "invalid_argument",
    );
  }

  /** Fills in the job's batch size, inputs in model order and output indexes. */
  #validate(job: Job): void {
    const { spec } = this;
    const { request, inputs } = job;
    const model = spec.name;
    if (request.outputs.length > 0) {
      job.outputs = request.outputs.map((name) => {
        const index = spec.outputs.findIndex((o) => o.name === name);
        if (index < 0) {
          throw invalid(`unexpected inference output '${name}' for model '${model}'`);
        }
        return index;
      });
    }
    for (const input of request.inputs) {
      const index = spec.inputs.findIndex((i) => i.name === input.name);
      if (index < 0) {
        throw invalid(`unexpected inference input '${input.name}' for model '${model}'`);
      }
      if (inputs[index] !== undefined) {
        throw this.#error(request, `input '${input.name}' already exists in request`);
      }
      inputs[index] = input;
    }
    if (request.inputs.length !== spec.inputs.length) {
      const list = (names: string[]) => `[${names.map((n) => `'${n}'`).join(",")}]`;
      const missing = spec.inputs.filter((_, i) => inputs[i] === undefined).map((i) => i.name);
      throw this.#error(
        request,
        `expected ${spec.inputs.length} inputs but got ${request.inputs.length} inputs for ` +
          `model '${model}'. Got input(s) ${list(request.inputs.map((i) => i.name))}, ` +
          `but missing required input(s) ${list(missing)}. Please provide all required input(s).`,
      );
    }
    const batched = spec.maxBatchSize > 0 ? 1 : 0;
    let batch = 1;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i];
      const expected = spec.inputs[i];
      if (input.datatype !== expected.datatype) {
        throw this.#error(
          request,
          `inference input '${input.name}' data-type is '${input.datatype}', but model ` +
            `'${model}' expects '${expected.datatype}'`,
        );
      }
      const shape = input.shape;
      if (batched) {
        if (shape.length === 0 || (i > 0 && shape[0] !== batch)) {
          throw this.#error(
            request,
            `input '${input.name}' batch size does not match other inputs for '${model}'`,
          );
        }
        batch = shape[0];
        if (batch < 1 || batch > spec.maxBatchSize) {
          throw this.#error(
            request,
            `inference request batch-size must be <= ${spec.maxBatchSize} for '${model}'`,
          );
        }
      }
      const dims = expected.dims;
      let fits = shape.length === dims.length + batched;
      for (let d = 0; fits && d < dims.length; d++) {
        fits = dims[d] === -1 || dims[d] === shape[d + batched];
      }
      if (!fits) {
        const full = batched ? [-1, ...dims] : dims;
        throw this.#error(
          request,
          `unexpected shape for input '${input.name}' for model '${model}'. ` +
            `Expected [${full.join(",")}], got [${shape.join(",")}]. `,
        );
      }
      this.#checkSize(request, input);
    }
    job.batch = batch;
    job.enqueued = this.#clock.now();
  }

  /**
   * Applies Triton's sequence rules in arrival order: a sequence begins with
   * a START request, ends with an END request and is released after
   * max_sequence_idle_ms without requests. Beyond Triton, a START for a live
   * id is rejected, so that a client that reuses ids is caught.
   */
  #track(request: CoreRequest): SequenceState {
    const model = this.spec.name;
    const idleMs = this.spec.sequence!.maxSequenceIdleMs;
    const flags = request.sequence;
    const raw = flags?.id ?? 0;
    if (typeof raw === "string" && !this.spec.sequence!.stringIds) {
      throw this.#error(request, "correlation ID in request is not an unsigned int");
    }
    if (raw === 0 || raw === 0n || raw === "") {
      throw invalid(
        `inference request to model '${model}' must specify a non-zero or non-empty correlation ID`,
      );
    }
    const id = typeof raw === "bigint" && raw <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(raw)
      : raw;
    const now = this.#clock.now();
    if (now - this.#lastSweep > idleMs) {
      this.#lastSweep = now;
      for (const [key, s] of this.#sequences) {
        if (now - s.lastSeen > idleMs) this.#sequences.delete(key);
      }
    }
    let sequence = this.#sequences.get(id);
    if (sequence !== undefined && now - sequence.lastSeen > idleMs) {
      this.#sequences.delete(id);
      sequence = undefined;
    }
    if (flags!.start) {
      if (sequence !== undefined) {
        throw invalid(
          `inference request for sequence ${id} to model '${model}' has the START flag, ` +
            "but the sequence is already in progress (sequence ids must not be reused while live)",
        );
      }
      sequence = { lastSeen: now, state: { value: undefined } };
      this.#sequences.set(id, sequence);
    } else if (sequence === undefined) {
      throw invalid(
        `inference request for sequence ${id} to model '${model}' must specify the START flag ` +
          "on the first request of the sequence",
      );
    }
    sequence.lastSeen = now;
    if (flags!.end) this.#sequences.delete(id);
    return sequence.state;
  }

  #checkSize(request: CoreRequest, input: Tensor): void {
    const count = elementCount(input.shape);
    const size = elementSize(input.datatype);
    const where = `for inference input '${input.name}' for model '${this.spec.name}'`;
    if (size === 0) {
      let got: number;
      try {
        got = decodeBytesElements(input.data).length;
      } catch (error) {
        throw this.#error(request, `${(error as Error).message} ${where}`);
      }
      if (got !== count) {
        throw this.#error(request, `expected ${count} string elements ${where}, got ${got}`);
      }
    } else if (count * size !== input.data.byteLength) {
      throw this.#error(
        request,
        `input byte size mismatch for input '${input.name}' for model '${this.spec.name}'. ` +
          `Expected ${count * size}, got ${input.data.byteLength}`,
      );
    }
  }

  /** Starts executions while an instance is idle and a batch is ready. */
  #dispatch(): void {
    while (this.#idle.length > 0 && this.#head < this.#queue.length) {
      let end = this.#head + 1;
      let readyAt = this.#queue[this.#head].enqueued;
      if (this.spec.dynamicBatching !== undefined) {
        const ready = this.#formBatch();
        if (ready === undefined) return;
        [end, readyAt] = ready;
      }
      const jobs = this.#queue.slice(this.#head, end);
      this.#head = end;
      if (this.#head === this.#queue.length) {
        this.#queue.length = 0;
        this.#head = 0;
      }
      const instance = this.#idle.pop()!;
      instance.jobs = jobs;
      this.#start(instance, readyAt);
    }
  }

  /**
   * Takes queued requests in FIFO order up to max_batch_size. The batch goes
   * now when it is full, when it reaches a preferred size, or when the oldest
   * request has waited max_queue_delay; otherwise a timer retries then.
   * Returns the end index into the queue and when the batch became ready.
   */
  #formBatch(): [number, number] | undefined {
    const { maxQueueDelayMs, preferredBatchSizes: preferred } = this.spec.dynamicBatching!;
    const queue = this.#queue;
    const max = this.spec.maxBatchSize;
    let size = 0;
    let end = this.#head;
    let preferredEnd = -1;
    while (end < queue.length && size + queue[end].batch <= max) {
      size += queue[end].batch;
      end++;
      if (preferred.includes(size)) preferredEnd = end;
    }
    if (size === max) return [end, queue[end - 1].enqueued];
    // The next request does not fit, so this batch cannot grow.
    if (end < queue.length) return [end, queue[end].enqueued];
    if (preferredEnd > 0) return [preferredEnd, queue[preferredEnd - 1].enqueued];
    const deadline = queue[this.#head].enqueued + maxQueueDelayMs;
    const now = this.#clock.now();
    // A late timer may have let newer requests join; none of them was ready before it came.
    if (now >= deadline) return [end, Math.max(deadline, queue[end - 1].enqueued)];
    if (this.#cancelBatchTimer === undefined) {
      this.#cancelBatchTimer = this.#clock.setTimer(() => {
        this.#cancelBatchTimer = undefined;
        this.#dispatch();
      }, deadline - now);
    }
    return undefined;
  }

  /** Runs `instance.jobs` as one execution. */
  #start(instance: Instance, readyAt: number): void {
    instance.start = Math.max(instance.freeAt, readyAt);
    if (this.spec.blsModels !== undefined) return this.#call(instance);
    const faults = this.#faults;
    instance.inferMs = this.#computeMs() +
      (faults?.extraComputeMs(instance.start, this.queued) ?? 0);
    const computed = instance.start + this.spec.computeInputMs + instance.inferMs +
      this.spec.computeOutputMs;
    // A stall holds the response and keeps the instance busy, like a process that froze.
    const end = faults ? faults.releaseAt(computed) : computed;
    instance.freeAt = end;
    const delay = end - this.#clock.now();
    if (delay <= 0) {
      this.#complete(instance);
      return;
    }
    this.#busy.add(instance);
    const fire = () => {
      // Timers round fractional delays and sometimes fire early; never answer before `end`.
      const early = end - this.#clock.now();
      if (early > 0) {
        instance.cancel = this.#clock.setTimer(fire, early);
        return;
      }
      this.#busy.delete(instance);
      this.#complete(instance);
      this.#dispatch();
    };
    instance.cancel = this.#clock.setTimer(fire, delay);
  }

  /**
   * A BLS execution: its own compute time, then each request through the
   * called models in order, all of the batch's at once; the instance is busy
   * until every one has come back.
   */
  #call(instance: Instance): void {
    this.#busy.add(instance);
    instance.inferMs = this.#computeMs();
    const run = () => {
      instance.cancel = noop;
      void Promise.allSettled(
        instance.jobs.map((job) =>
          blsCall(this.spec, { resolve: this.#resolve!, now: () => this.#clock.now(), job })
        ),
      ).then((settled) => {
        // close() has failed the requests.
        if (this.#closed) return;
        this.#busy.delete(instance);
        instance.freeAt = this.#clock.now();
        // The calls' time is the BLS model's compute time, as Triton counts a Python model's.
        instance.inferMs = instance.freeAt - instance.start - this.spec.computeInputMs;
        this.#complete(instance, settled);
        this.#dispatch();
      });
    };
    const wait = instance.start + this.spec.computeInputMs + instance.inferMs - this.#clock.now();
    if (wait > 0) instance.cancel = this.#clock.setTimer(run, wait);
    else run();
  }

  /** Ends an execution: its outputs (a BLS model's from its calls, `settled`) and statistics. */
  #complete(instance: Instance, settled?: PromiseSettledResult<Tensor[]>[]): void {
    const clock = this.#clock;
    const stats = this.stats;
    const { jobs, start } = instance;
    instance.jobs = [];
    const workStart = clock.now();
    const results = settled ??
      jobs.map((job): PromiseSettledResult<Tensor[]> => ({
        status: "fulfilled",
        value: this.#behaviour(job.inputs, job.outputs, job.sequence),
      }));
    const done = clock.now();
    const inputMs = this.spec.computeInputMs;
    // The real work of computing the outputs counts as compute time too.
    const inferMs = instance.inferMs + (done - workStart);
    const outputMs = this.spec.computeOutputMs;
    let size = 0;
    for (const job of jobs) size += job.batch;
    stats.executionCount++;
    stats.inferenceCount += size;
    stats.lastInference = Date.now();
    const batch = stats.batch(size);
    batch.computeInput.add(inputMs);
    batch.computeInfer.add(inferMs);
    batch.computeOutput.add(outputMs);
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i];
      const result = results[i];
      if (result.status === "rejected") {
        stats.fail.add(done - job.request.arrival);
        job.reject(result.reason);
        continue;
      }
      stats.queue.add(start - job.enqueued);
      stats.computeInput.add(inputMs);
      stats.computeInfer.add(inferMs);
      stats.computeOutput.add(outputMs);
      stats.success.add(done - job.request.arrival);
      job.resolve(result.value);
    }
    this.#load?.addBusy(instance.device, inputMs + inferMs + outputMs);
    this.#idle.push(instance);
  }
}
