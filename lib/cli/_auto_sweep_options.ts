/** --sweep-size: GuideLLM's sweep profile, and the options it can not be used with. */
import type { AutoSweepPlan } from "../profile/plan.ts";
import type { Reader } from "./_reader.ts";
import type { RawOptions } from "./options.ts";

/** Options that choose the levels themselves, which the automatic sweep chooses. */
const LEVEL_OPTIONS = [
  "concurrency-range",
  "request-rate-range",
  "request-intervals",
  "fixed-schedule",
  "periodic-concurrency-range",
  "session-concurrency",
  "binary-search",
  "latency-threshold",
  "concurrent-requests",
  "max-concurrency",
  "num-profile-runs",
  "enable-mpi",
  "search-recipe",
];

export function parseAutoSweep(r: Reader, raw: RawOptions): AutoSweepPlan {
  const plan: AutoSweepPlan = {
    sweepMaxConcurrency: r.bounded("sweep-max-concurrency", (n) => n >= 1, "an integer >= 1"),
  };
  if (!r.has("sweep-size")) {
    if (r.has("sweep-max-concurrency")) {
      r.errors.push("Option --sweep-max-concurrency needs --sweep-size");
    }
    return plan;
  }
  plan.sweepSize = r.bounded(
    "sweep-size",
    (n) => n >= 2,
    "an integer >= 2 (the synchronous and throughput levels, then the rates)",
  );
  const given = LEVEL_OPTIONS.filter((name) => raw.has(name));
  for (const name of given) {
    r.errors.push(
      `Option --sweep-size can not be used with --${name}: the sweep chooses its levels itself`,
    );
  }
  const distribution = r.string("request-distribution");
  if (distribution !== "constant" && distribution !== "poisson") {
    r.errors.push(
      `Option --sweep-size takes --request-distribution constant or poisson (GuideLLM's), not ${distribution}`,
    );
  }
  return plan;
}
