/**
 * Where each send takes its request from, and the check of its response.
 * Plain loads cycle through the prepared requests; sequence loads keep one
 * stream per lane (see sequences.ts), whose requests must be sent in order.
 */
import type { OutputCheck } from "../input/validation.ts";
import type { PreparedRequest } from "../protocol/types.ts";

export interface RequestFeed {
  /**
   * Lanes an open-loop load cycles through: live sequences (--num-of-sequences),
   * or 1 when requests are independent. A closed loop gives each worker its own lane.
   */
  readonly lanes: number;
  /** True when lanes are sequences, whose requests depend on each other. */
  readonly sequences: boolean;
  /** The request of the next send on `lane`. */
  next(lane: number): PreparedRequest;
  /**
   * Sequences: makes the next request of `lane` the last of its sequence (the
   * END flag), so that no sequence outlives a level; false when the lane has
   * no sequence under way (none begun, or its last request sent).
   */
  endSequence?(lane: number): boolean;
  /**
   * Output validation of a request this feed returned: its response is
   * decoded and a mismatch fails it. Undefined without validation data.
   */
  check(request: PreparedRequest): OutputCheck | undefined;
}

/** Independent requests, taken in turn (the input-data steps). */
export class RoundRobinFeed implements RequestFeed {
  readonly lanes = 1;
  readonly sequences = false;
  readonly #requests: readonly PreparedRequest[];
  readonly #checks: ReadonlyMap<PreparedRequest, OutputCheck> | undefined;
  #next = 0;

  constructor(
    requests: readonly PreparedRequest[],
    checks?: ReadonlyMap<PreparedRequest, OutputCheck>,
  ) {
    if (requests.length === 0) throw new RangeError("At least one request is needed");
    this.#requests = requests;
    this.#checks = checks;
  }

  next(): PreparedRequest {
    const request = this.#requests[this.#next];
    this.#next = (this.#next + 1) % this.#requests.length;
    return request;
  }

  check(request: PreparedRequest): OutputCheck | undefined {
    return this.#checks?.get(request);
  }
}
