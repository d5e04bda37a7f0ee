/**
 * AIPerf's request cancellation (--request-cancellation-rate PCT,
 * --request-cancellation-delay S): each request is drawn for cancellation
 * with probability PCT / 100 from a seeded generator (runs repeat exactly);
 * a drawn request still in flight S after its send has its session closed
 * and is counted as cancelled, apart from the valid and failed ones.
 */
import { mulberry32, type Rng } from "../input/generate.ts";
import type { CancellationPlan } from "./plan.ts";

const CANCELLATION_SEED = 0xca9c;

/** The draw of a load's requests; one per load, so that each load's sequence is its own. */
export class Cancellation {
  readonly delayMs: number;
  readonly #fraction: number;
  readonly #rng: Rng;

  constructor(plan: CancellationPlan) {
    this.delayMs = plan.delayMs;
    this.#fraction = plan.percent / 100;
    this.#rng = mulberry32(CANCELLATION_SEED);
  }

  /** Whether the next request is to be cancelled. */
  draw(): boolean {
    return this.#rng() < this.#fraction;
  }
}
