/**
 * Service level objectives, the one concept behind --slo, --slo-attainment,
 * the capacity search (lib/load/capacity.ts) and the CI gates (--threshold).
 *
 * Syntax: `METRIC:STAT OP VALUE` or, for single figures, `METRIC OP VALUE`,
 * with OP one of `<=`, `>=`, `<`, `>`; comma-separated or repeated. METRIC is
 * a name of the summary JSON or an alias (metrics.ts: perf_analyzer's,
 * Model Analyzer's and AIPerf's), STAT avg, std, min, max or pN; times are
 * milliseconds. Model Analyzer's combined names (perf_latency_p99,
 * p99-latency, avg-time-to-first-token) read as METRIC:STAT too.
 *
 * A per-request metric without a statistic (`request_latency<=30`,
 * `time_to_first_token<=200`) bounds each request: the level counts the
 * requests that meet every such bound (AIPerf's goodput, through the
 * --goodput objectives: `sloObjectives`), and the SLO holds when their share
 * of all requests, failed ones included, is at least the attainment
 * (--slo-attainment, default 1: every request).
 *
 * API:
 * - `parseSlos(texts, options)`: Slo[]; throws UsageError, one line per bad item.
 * - `checkSlos(slos, context)`: one line per SLO the run can not measure.
 * - `sloObjectives(slos)`: the per-request bounds as --goodput objectives.
 * - `evaluateSlos(result, slos, { attainment })`: SloVerdict[], one per
 *   statistic SLO and one for the per-request SLOs together.
 * - `slosMet(verdicts)`, `formatSlos(slos)`, `isFloor(slo)` (a lower bound on a
 *   throughput, which the capacity search checks at its answer).
 *
 * @module
 */
import { UsageError } from "../types/errors.ts";
import type { GoodputObjective, LevelResult } from "../types/results.ts";
import {
  findMetric,
  measuredPercentiles,
  type Metric,
  type MetricDef,
  metricOf,
  METRICS,
} from "./metrics.ts";

export type SloOp = "<=" | ">=" | "<" | ">";

export interface Slo {
  /** As it prints and round-trips: "request_latency:p99<=30". */
  text: string;
  metric: Metric;
  op: SloOp;
  limit: number;
  /** Bounds each request (a per-request metric without statistic): judged by the attainment. */
  perRequest: boolean;
}

export interface SloVerdict {
  /** The SLO judged; for the per-request SLOs together, the first of them. */
  slo: Slo;
  /** The level's figure: the statistic, or the share of good requests (per-request SLOs). */
  value: number | undefined;
  met: boolean;
  /** "request_latency:p99 31.2 > 30 msec", "request_latency:p99 28.1 <= 30 msec". */
  text: string;
}

/** Model Analyzer's, the sweep goals' and perf_analyzer's combined metric-and-statistic names. */
function combinedName(name: string): { metric: string; statistic: string } | undefined {
  const n = name.trim().toLowerCase();
  const ma = /^perf_latency_(avg|p\d+)$/.exec(n);
  if (ma) return { metric: "latency", statistic: ma[1] };
  const goal = /^(avg|p\d+)-([a-z-]+)$/.exec(n);
  if (goal) return { metric: goal[2], statistic: goal[1] };
  return undefined;
}

/**
 * The metric a name means: `METRIC:STAT`, `METRIC`, or a combined name
 * (`perf_latency_p99`, `p99-latency`, `avg-time-to-first-token`); a
 * one-line reason listing the valid names or statistics otherwise.
 */
export function parseMetricName(text: string): Metric | string {
  const [name, statistic] = text.includes(":")
    ? text.split(":", 2).map((s) => s.trim())
    : [text.trim(), undefined];
  let def: MetricDef | undefined = findMetric(name);
  let stat = statistic;
  if (def === undefined && stat === undefined) {
    const combined = combinedName(name);
    def = combined && findMetric(combined.metric);
    stat = combined?.statistic;
  }
  if (def === undefined) {
    return `unknown metric "${name}": expected one of ${
      METRICS.map((m) => m.name).join(", ")
    } (or an alias: ${METRICS.flatMap((m) => m.aliases).join(", ")})`;
  }
  // A per-request metric without statistic is a bound on each request.
  if (stat === undefined && def.perRequest !== undefined) {
    return {
      name: def.name,
      label: def.label ?? def.name.replaceAll("_", " "),
      unit: def.unit,
      higherIsBetter: def.higherIsBetter,
      def,
      value: () => undefined,
    };
  }
  return metricOf(def, { statistic: stat, name: text.trim() });
}

const SLO_PATTERN = /^\s*([A-Za-z0-9_.:-]+?)\s*(<=|>=|<|>)\s*(-?[0-9.eE+]+)\s*$/;

/** One `METRIC[:STAT] OP VALUE`, or a one-line reason why not. */
export function parseSlo(text: string): Slo | string {
  const match = SLO_PATTERN.exec(text);
  if (!match) return `expected METRIC:STAT<=VALUE (or >=, <, >), e.g. request_latency:p99<=30`;
  const metric = parseMetricName(match[1]);
  if (typeof metric === "string") return metric;
  const limit = Number(match[3]);
  if (!Number.isFinite(limit) || limit < 0) return "the value must be a number >= 0";
  const op = match[2] as SloOp;
  const perRequest = metric.statistic === undefined && metric.def.perRequest !== undefined;
  if (perRequest && (op.startsWith(">") !== metric.higherIsBetter)) {
    return `${metric.def.name} without statistic bounds each request and is good when ${
      metric.higherIsBetter ? "high (>=)" : "low (<=)"
    }; give a statistic (${metric.def.name}:p99${op}${limit}) to bound the level's figure`;
  }
  const name = metric.statistic === undefined
    ? metric.def.name
    : `${metric.def.name}:${metric.statistic}`;
  return { text: `${name}${op}${limit}`, metric, op, limit, perRequest };
}

/**
 * Parses SLOs (repeated values, each possibly comma-separated); `flag`
 * names the option in messages (default --slo). Throws UsageError with one
 * line per faulty item.
 */
export function parseSlos(
  texts: string | readonly string[],
  options: { flag?: string } = {},
): Slo[] {
  const flag = options.flag ?? "--slo";
  const items = (typeof texts === "string" ? [texts] : texts)
    .flatMap((t) => t.split(",")).map((t) => t.trim()).filter((t) => t !== "");
  const errors: string[] = [];
  const slos: Slo[] = [];
  for (const item of items) {
    const slo = parseSlo(item);
    if (typeof slo === "string") errors.push(`Invalid value "${item}" for ${flag}: ${slo}`);
    else slos.push(slo);
  }
  if (errors.length > 0) throw new UsageError(errors);
  return slos;
}

/** What a run can measure, for `checkSlos`. */
export interface SloContext {
  /** --service-kind. */
  serviceKind: string;
  /** The run streams tokens (LLM figures: --service-kind openai). */
  llm: boolean;
  /** The run is an open loop (request rate, intervals). */
  openLoop: boolean;
  /** --percentile, which levels report besides the standard ones. */
  percentile?: number;
  /** The option the SLOs came from (default --slo). */
  flag?: string;
}

/** One line per SLO the run has no figure for (a metric of another service kind, a percentile). */
export function checkSlos(slos: readonly Slo[], context: SloContext): string[] {
  const flag = context.flag ?? "--slo";
  const errors: string[] = [];
  for (const slo of slos) {
    const def = slo.metric.def;
    const missing = def.scope === "llm" && !context.llm
      ? "token-streaming LLM runs only (--service-kind openai)"
      : def.scope === "open_loop" && !context.openLoop
      ? "open-loop runs only (--request-rate-range, --request-intervals)"
      : def.scope === "server_ram"
      ? "model configuration searches with a local server only"
      : undefined;
    if (missing) {
      errors.push(
        `${flag} ${slo.text}: --service-kind ${context.serviceKind} has no value for ${def.name} (${missing})`,
      );
      continue;
    }
    const p = slo.metric.statistic?.startsWith("p") ? Number(slo.metric.statistic.slice(1)) : NaN;
    const measured = measuredPercentiles(def, context);
    if (!Number.isNaN(p) && !measured.includes(p)) {
      errors.push(
        `${flag} ${slo.text} needs --percentile ${p}: levels report ${
          measured.map((q) => `p${q}`).join(", ")
        } of ${def.name}`,
      );
    }
  }
  return errors;
}

/** The per-request SLOs as the --goodput objectives the level counts good requests by. */
export function sloObjectives(slos: readonly Slo[]): GoodputObjective[] {
  return slos.filter((s) => s.perRequest).map((s) => ({
    metric: s.metric.def.perRequest!,
    value: s.limit,
  }));
}

function holds(value: number, op: SloOp, limit: number): boolean {
  switch (op) {
    case "<=":
      return value <= limit;
    case ">=":
      return value >= limit;
    case "<":
      return value < limit;
    case ">":
      return value > limit;
  }
}

const NEGATED: Record<SloOp, string> = { "<=": ">", ">=": "<", "<": ">=", ">": "<=" };

/** A figure as verdicts print it: 3 significant decimals below 10, one above. */
function shown(value: number): number {
  return Number(value.toFixed(value < 10 ? 3 : 1));
}

function unitText(metric: Metric): string {
  return metric.unit === "fraction" ? "" : ` ${metric.unit}`;
}

/** The good requests' share of all requests (failed ones count as not good), or undefined. */
export function attainmentOf(result: LevelResult): number | undefined {
  return findMetric("good_request_fraction")!.value!(result);
}

/**
 * Judges a level against SLOs: one verdict per statistic or single-figure
 * SLO, then one for the per-request SLOs together (the share of requests
 * that met them all against `attainment`, default 1). A figure the level
 * lacks fails its SLO ("not measured").
 */
export function evaluateSlos(
  result: LevelResult,
  slos: readonly Slo[],
  options: { attainment?: number } = {},
): SloVerdict[] {
  const verdicts: SloVerdict[] = [];
  for (const slo of slos.filter((s) => !s.perRequest)) {
    const value = slo.metric.value(result);
    const name = slo.text.slice(0, slo.text.length - `${slo.op}${slo.limit}`.length);
    if (value === undefined) {
      verdicts.push({ slo, value, met: false, text: `${name} not measured` });
      continue;
    }
    const met = holds(value, slo.op, slo.limit);
    verdicts.push({
      slo,
      value,
      met,
      text: `${name} ${shown(value)} ${met ? slo.op : NEGATED[slo.op]} ${slo.limit}${
        unitText(slo.metric)
      }`,
    });
  }
  const perRequest = slos.filter((s) => s.perRequest);
  if (perRequest.length > 0) {
    const want = options.attainment ?? 1;
    const value = attainmentOf(result);
    const bounds = perRequest.map((s) => s.text).join(", ");
    const met = value !== undefined && value >= want;
    verdicts.push({
      slo: perRequest[0],
      value,
      met,
      text: value === undefined
        ? `requests within ${bounds} not counted`
        : `${shown(value * 100)} % of requests within ${bounds} ${met ? ">=" : "<"} ${
          shown(want * 100)
        } %`,
    });
  }
  return verdicts;
}

/**
 * A lower bound on a rate that grows with the load (`throughput>=100`): it
 * breaks at low loads, not high ones, so a capacity search checks it at its
 * answer instead of bisecting on it.
 */
export function isFloor(slo: Slo): boolean {
  return slo.metric.def.growsWithLoad === true && slo.op.startsWith(">");
}

/** True when every verdict holds. */
export function slosMet(verdicts: readonly SloVerdict[]): boolean {
  return verdicts.every((v) => v.met);
}

/** `request_latency:p99<=30`, or with the attainment: `request_latency<=30 for 95 % of requests`. */
export function formatSlos(slos: readonly Slo[], options: { attainment?: number } = {}): string {
  const perRequest = slos.filter((s) => s.perRequest).map((s) => s.text);
  const statistic = slos.filter((s) => !s.perRequest).map((s) => s.text);
  const attained = perRequest.length === 0
    ? []
    : [`${perRequest.join(", ")} for ${shown((options.attainment ?? 1) * 100)} % of requests`];
  return [...statistic, ...attained].join(", ");
}
