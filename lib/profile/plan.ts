/**
 * A run's plan: what lib/cli makes of the command line, validated. It is the
 * union of the stages' parts, each declared by the folder that reads it, so
 * a stage's functions name their part and see nothing else of the plan.
 */
import type { InputPlan } from "../input/plan.ts";
import type { LoadPlan } from "../load/plan.ts";
import type { MeasurementOptions, MetricsPlan, SloPlan, TokenPlan } from "../measure/plan.ts";
import type { MpiPlan } from "../mpi/plan.ts";
import type { ClientPlan } from "../protocol/plan.ts";
import type { ReportPlan } from "../report/plan.ts";

/** --trace-level, --trace-rate, --trace-count and --log-frequency: Triton trace settings to set. */
export interface TraceConfig {
  /** In the order given, each once; empty leaves the server's levels as they are. */
  levels: string[];
  rate?: number;
  count?: number;
  logFrequency?: number;
}

/** --num-profile-runs: the whole measurement repeated, its figures given confidence intervals. */
export interface RepeatPlan {
  /** 1: a single run. */
  numProfileRuns: number;
  confidenceLevel: number;
  /** --convergence-threshold: stop once every interval spans at most this share of its mean. */
  convergenceThreshold?: number;
  cooldownMs: number;
}

/** --sweep-size: GuideLLM's sweep profile (synchronous, throughput, then rates in between). */
export interface AutoSweepPlan {
  /** Levels in all, the synchronous and throughput ones included; absent: no automatic sweep. */
  sweepSize?: number;
  sweepMaxConcurrency: number;
}

interface PlanParts
  extends
    ClientPlan,
    InputPlan,
    LoadPlan,
    MeasurementOptions,
    MetricsPlan,
    MpiPlan,
    ReportPlan,
    RepeatPlan,
    AutoSweepPlan,
    SloPlan,
    TokenPlan {
  /** --trace-*: the server's trace settings to update before profiling. */
  trace?: TraceConfig;
}

/** Read-only: built once by lib/cli; a stage that needs a variant makes a copy. */
export type ProfilePlan = Readonly<PlanParts>;
