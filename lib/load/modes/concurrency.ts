/**
 * --concurrency-range: a closed loop of `value` requests in flight per
 * level; ramped up to it (--concurrency-ramp-duration), or one level that
 * follows --concurrency-stages.
 */
import { concurrencySteps, rampShape, shapeDurationMs, stagesShape } from "../shape.ts";
import type { LoadModeDef } from "./mode.ts";

export const concurrency: LoadModeDef = {
  reportAs: "concurrency",
  pattern: (plan) => {
    if (plan.stages) {
      // k6's ramping-vus starts from 1; the level is reported at the highest target.
      const shape = stagesShape(plan.stages, 1);
      const steps = concurrencySteps(shape);
      const peak = Math.max(1, ...plan.stages.map((s) => s.target));
      return {
        range: { start: peak, end: peak, step: 1 },
        steps: () => steps,
        durationMs: shapeDurationMs(shape),
      };
    }
    const ramp = plan.ramp;
    if (ramp) {
      return {
        range: plan.concurrency,
        steps: (value) => concurrencySteps(rampShape(value, ramp)),
      };
    }
    return { range: plan.concurrency };
  },
};
