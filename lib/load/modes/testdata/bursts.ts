/**
 * A toy load mode, written as a newcomer would add one: level `value` sends
 * `value` requests at once, every GAP_MS. This file and its entry in
 * LOAD_MODES are all it takes (mod_test.ts registers it).
 */
import type { LoadModeDef } from "../mode.ts";

export const GAP_MS = 40;

export const bursts: LoadModeDef = {
  reportAs: "request_rate",
  // The burst sizes to sweep come from --concurrency-range.
  pattern: (plan) => ({
    range: plan.concurrency,
    schedule: (value) => {
      let n = 0;
      return { next: () => Math.floor(n++ / value) * GAP_MS };
    },
  }),
};
