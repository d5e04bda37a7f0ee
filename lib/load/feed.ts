/**
 * Where each send takes its request from. Plain loads cycle through the
 * prepared requests; sequence loads keep one stream per lane (see
 * sequences.ts), whose requests must be sent in order.
 */
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
}

/** Independent requests, taken in turn (the input-data steps). */
export class RoundRobinFeed implements RequestFeed {
  readonly lanes = 1;
  readonly sequences = false;
  readonly #requests: readonly PreparedRequest[];
  #next = 0;

  constructor(requests: readonly PreparedRequest[]) {
    if (requests.length === 0) throw new RangeError("At least one request is needed");
    this.#requests = requests;
  }

  next(): PreparedRequest {
    const request = this.#requests[this.#next];
    this.#next = (this.#next + 1) % this.#requests.length;
    return request;
  }
}
