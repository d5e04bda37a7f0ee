/** --request-rate-range: an open loop at `value` sends per second, evenly spaced or Poisson. */
import { constantSchedule, poissonSchedule } from "../schedule.ts";
import type { LoadModeDef } from "./mode.ts";

export const requestRate: LoadModeDef = {
  reportAs: "request_rate",
  pattern: (plan) => ({
    range: plan.requestRate,
    schedule: (value, rng) =>
      plan.requestDistribution === "poisson"
        ? poissonSchedule(value, rng)
        : constantSchedule(value),
  }),
};
