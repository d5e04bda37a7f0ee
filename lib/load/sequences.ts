/**
 * Requests of sequence (stateful) models: each lane runs one sequence after
 * another; every request carries its sequence's id, the first one the start
 * flag and the last one the end flag, as Triton's sequence batcher expects.
 *
 * Input data given as several streams (nested JSON `data`) is played back:
 * each new sequence takes the next stream and lasts as many requests as the
 * stream has steps. Otherwise every sequence cycles through the one stream
 * and its length follows --sequence-length and --sequence-length-variation.
 *
 * A load that stops (the end of a level) sends each sequence under way one
 * last request with the END flag, as perf_analyzer does: a sequence left
 * open would idle out on the server while the client pauses between levels
 * (Triton's max_sequence_idle_microseconds), and its next request, without
 * the START flag, would be refused.
 *
 * The request bytes differ per sequence and position, so they are prepared
 * when first needed and cached for the lane's current sequence: a sequence of
 * one input-data step costs at most three preparations (start, middle, end),
 * however long it is. Each preparation inherits the output check of its
 * input-data step, so validation works on sequences too.
 */
import type { Rng } from "../input/generate.ts";
import type { OutputCheck } from "../input/validation.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { PreparedRequest } from "../protocol/types.ts";
import type { RequestFeed } from "./feed.ts";

/** perf_analyzer's default --sequence-id-range end: UINT32_MAX. */
export const MAX_SEQUENCE_ID = 4294967295;

export interface SequenceOptions {
  /** Lanes an open-loop load cycles through (--num-of-sequences). */
  count: number;
  /** Base length (--sequence-length). */
  length: number;
  /** Lengths vary uniformly by up to this percentage of `length` (--sequence-length-variation). */
  variationPct: number;
  /** Ids are taken in turn from this range, wrapping around (--sequence-id-range). */
  idRange: { start: number; end: number };
  /** Source of the length variation. */
  rng: Rng;
  /** Output checks aligned with the streams' requests (validation data), where given. */
  checks?: readonly (readonly (OutputCheck | undefined)[])[];
}

const START = 1;
const END = 2;

interface Lane {
  id: number;
  /** The input-data stream of the current sequence, and the checks of its requests. */
  stream: readonly InferRequest[];
  checks: readonly (OutputCheck | undefined)[] | undefined;
  length: number;
  /** Index of the next request in the sequence. */
  step: number;
  /** Prepared requests of the current sequence by input-data step x 4 + flags. */
  prepared: (PreparedRequest | undefined)[];
}

export class SequenceFeed implements RequestFeed {
  readonly lanes: number;
  readonly sequences = true;
  readonly #streams: readonly (readonly InferRequest[])[];
  readonly #steps: number;
  readonly #prepare: (request: InferRequest) => PreparedRequest;
  readonly #options: SequenceOptions;
  readonly #lanes: Lane[] = [];
  /** Ids of sequences started and not yet ended, so a wrapped-around id never joins a live one. */
  readonly #live = new Set<number>();
  /** Checks by prepared request, weakly: an entry goes with its sequence's preparations. */
  readonly #checks = new WeakMap<PreparedRequest, OutputCheck>();
  #counter = 0;
  #stream = 0;

  constructor(
    streams: readonly (readonly InferRequest[])[],
    prepare: (request: InferRequest) => PreparedRequest,
    options: SequenceOptions,
  ) {
    if (streams.length === 0 || streams.some((s) => s.length === 0)) {
      throw new RangeError("Every input-data stream needs at least one request");
    }
    const { start, end } = options.idRange;
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 1 && end >= start)) {
      throw new RangeError(`Invalid sequence id range "${start}:${end}"`);
    }
    if (options.checks?.some((c, i) => c.length !== streams[i]?.length)) {
      throw new RangeError("The checks must align with the streams' requests");
    }
    if (!(options.length >= 1 && options.count >= 1)) {
      throw new RangeError("Sequences need a length >= 1 and a count >= 1");
    }
    this.lanes = options.count;
    this.#streams = streams;
    this.#steps = Math.max(...streams.map((s) => s.length));
    this.#prepare = prepare;
    this.#options = options;
  }

  next(lane: number): PreparedRequest {
    const state = this.#lanes[lane] ??= {
      id: 0,
      stream: this.#streams[0],
      checks: this.#options.checks?.[0],
      length: 0,
      step: 0,
      prepared: new Array(this.#steps * 4),
    };
    if (state.step === state.length) this.#begin(state);
    const step = state.step++;
    const flags = (step === 0 ? START : 0) | (step === state.length - 1 ? END : 0);
    if (flags & END) this.#live.delete(state.id);
    const data = step % state.stream.length;
    const key = data * 4 + flags;
    let prepared = state.prepared[key];
    if (prepared === undefined) {
      prepared = state.prepared[key] = this.#prepareStep(state.stream[data], state.id, flags);
      const check = state.checks?.[data];
      if (check !== undefined) this.#checks.set(prepared, check);
    }
    return prepared;
  }

  check(request: PreparedRequest): OutputCheck | undefined {
    return this.#checks.get(request);
  }

  endSequence(lane: number): boolean {
    const state = this.#lanes[lane];
    if (state === undefined || state.step === 0 || state.step === state.length) return false;
    state.length = state.step + 1;
    return true;
  }

  #begin(state: Lane): void {
    state.id = this.#nextId();
    if (this.#streams.length > 1) {
      state.stream = this.#streams[this.#stream];
      state.checks = this.#options.checks?.[this.#stream];
      this.#stream = (this.#stream + 1) % this.#streams.length;
      state.length = state.stream.length;
    } else state.length = this.#length();
    state.step = 0;
    state.prepared.fill(undefined);
  }

  #nextId(): number {
    const { start, end } = this.#options.idRange;
    const size = end - start + 1;
    for (let tries = 0; tries < size; tries++) {
      const id = start + (this.#counter++ % size);
      if (!this.#live.has(id)) {
        this.#live.add(id);
        return id;
      }
    }
    throw new RangeError(
      `No free sequence id in --sequence-id-range ${start}:${end}: ` +
        `all ${size} are used by live sequences`,
    );
  }

  /** perf_analyzer's rule: the base length plus up to +-variation %, at least 1. */
  #length(): number {
    const { length, variationPct, rng } = this.#options;
    const offset = (2 * rng() - 1) * (variationPct / 100) * length;
    return Math.max(1, Math.round(length + offset));
  }

  #prepareStep(request: InferRequest, id: number, flags: number): PreparedRequest {
    return this.#prepare({
      ...request,
      parameters: {
        ...request.parameters,
        sequence_id: id,
        sequence_start: (flags & START) !== 0,
        sequence_end: (flags & END) !== 0,
      },
    });
  }
}
