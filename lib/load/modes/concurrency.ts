/** --concurrency-range: a closed loop of `value` requests in flight per level. */
import type { LoadModeDef } from "./mode.ts";

export const concurrency: LoadModeDef = {
  reportAs: "concurrency",
  pattern: (plan) => ({ range: plan.concurrency }),
};
