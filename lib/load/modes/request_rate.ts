/**
 * --request-rate-range: an open loop at `value` sends per second, evenly
 * spaced, Poisson or gamma; ramped up to it (--request-rate-ramp-duration),
 * or one level that follows --request-rate-stages.
 */
import {
  arrivalGaps,
  constantSchedule,
  gammaSchedule,
  poissonSchedule,
  type Schedule,
} from "../schedule.ts";
import { rampShape, sendsWithin, shapedSchedule, shapeDurationMs, stagesShape } from "../shape.ts";
import type { Rng } from "../../input/generate.ts";
import type { LoadPlan } from "../plan.ts";
import type { LoadModeDef } from "./mode.ts";

function steadySchedule(plan: LoadPlan, value: number, rng: Rng): Schedule {
  switch (plan.requestDistribution) {
    case "poisson":
      return poissonSchedule(value, rng);
    case "gamma":
      return gammaSchedule(value, { burstiness: plan.burstiness, rng });
    default:
      return constantSchedule(value);
  }
}

const STAGES_SLACK_MS = 1000;

export const requestRate: LoadModeDef = {
  reportAs: "request_rate",
  pattern: (plan) => {
    const gaps = (rng: Rng) => arrivalGaps(plan.requestDistribution, { ...plan, rng });
    if (plan.stages) {
      // k6's ramping-arrival-rate starts from 0 requests per second.
      const shape = stagesShape(plan.stages, 0);
      const durationMs = shapeDurationMs(shape);
      const sends = shape.pieces.reduce((n, p) => n + sendsWithin(p, p.durationMs), 0);
      // The level is reported at the stages' average rate, as a fixed schedule is.
      const rate = sends * 1000 / durationMs;
      return {
        range: { start: rate, end: rate, step: 1 },
        schedule: (_value, rng) => shapedSchedule(shape, gaps(rng)),
        // The schedule ends by itself with the last stage; the window's bound comes a second
        // later, so that a send due at the very end still leaves (it raced the bound).
        durationMs: durationMs + STAGES_SLACK_MS,
      };
    }
    const ramp = plan.ramp;
    if (ramp) {
      return {
        range: plan.requestRate,
        schedule: (value, rng) => shapedSchedule(rampShape(value, ramp), gaps(rng)),
      };
    }
    return {
      range: plan.requestRate,
      schedule: (value, rng) => steadySchedule(plan, value, rng),
    };
  },
};
