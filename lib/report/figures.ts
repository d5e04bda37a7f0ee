/**
 * The headline figures of a load level, read from its summary JSON (a level
 * of docs/summary.schema.json) and from its windows: what repeat runs give a
 * confidence interval and `inferperf compare` tests, each knowing its unit
 * and which direction is better (lib/measure/metrics.ts's table says).
 */
import { findMetric } from "../measure/metrics.ts";

/** A JSON value as the summary writes it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A summary level or window as parsed JSON. */
export type JsonObject = { readonly [key: string]: unknown };

export interface Figure {
  /** Its path in a summary level, e.g. "client.throughput", "llm.time_to_first_token_ms.p99". */
  key: string;
  /** As the console names it. */
  label: string;
  /** The display unit. */
  unit: string;
  /** The JSON value times `scale` is in `unit` (microseconds to milliseconds). */
  scale: number;
  better: "higher" | "lower";
}

/** [summary JSON name, label, statistics, the metric of lib/measure/metrics.ts] */
const LLM_LATENCIES: ReadonlyArray<[string, string, readonly string[], string]> = [
  ["time_to_first_token_ms", "Time to first token", ["avg", "p50", "p90", "p99"], "ttft"],
  ["inter_token_latency_ms", "Inter-token latency", ["avg", "p50", "p90", "p99"], "itl"],
  ["request_latency_ms", "LLM request latency", ["avg", "p99"], "request_latency"],
];

/** [summary JSON name, label, unit, the metric] */
const LLM_RATES: ReadonlyArray<[string, string, string, string]> = [
  ["request_throughput_per_sec", "Request throughput", "requests/sec", "request_throughput"],
  [
    "output_token_throughput_tokens_per_sec",
    "Output token throughput",
    "tokens/sec",
    "output_token_throughput",
  ],
  ["request_goodput_per_sec", "Request goodput", "requests/sec", "request_goodput"],
];

const PER_USER = "output_token_throughput_per_user_tokens_per_sec_per_user";

/** Which way is better, as the one table of metrics says (lib/measure/metrics.ts). */
function better(metric: string): Figure["better"] {
  return findMetric(metric)!.higherIsBetter ? "higher" : "lower";
}

/** The value at a dotted path of a JSON object; undefined unless it is a finite number. */
export function valueAt(object: JsonObject | undefined, path: string): number | undefined {
  let node: unknown = object;
  for (const key of path.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as JsonObject)[key];
  }
  return typeof node === "number" && Number.isFinite(node) ? node : undefined;
}

/** The headline figures `level` has a value for, in report order. */
export function headlineFigures(level: JsonObject): Figure[] {
  const latency = better("latency");
  const figures: Figure[] = [
    {
      key: "client.throughput",
      label: "Throughput",
      unit: "infer/sec",
      scale: 1,
      better: better("throughput"),
    },
    {
      key: "client.avg_latency_us",
      label: "Avg latency",
      unit: "ms",
      scale: 1e-3,
      better: latency,
    },
  ];
  const percentiles = (level.client as JsonObject | undefined)?.percentiles_us;
  const ps = Object.keys((percentiles ?? {}) as JsonObject).map(Number).sort((a, b) => a - b);
  for (const p of ps) {
    figures.push({
      key: `client.percentiles_us.${p}`,
      label: `p${p} latency`,
      unit: "ms",
      scale: 1e-3,
      better: latency,
    });
  }
  for (const [name, label, unit, metric] of LLM_RATES) {
    figures.push({ key: `llm.${name}`, label, unit, scale: 1, better: better(metric) });
  }
  for (const [name, label, stats, metric] of LLM_LATENCIES) {
    for (const stat of stats) {
      figures.push({
        key: `llm.${name}.${stat}`,
        label: `${label} ${stat}`,
        unit: "ms",
        scale: 1,
        better: better(metric),
      });
    }
  }
  figures.push({
    key: `llm.${PER_USER}.avg`,
    label: "Output token throughput per user avg",
    unit: "tokens/sec/user",
    scale: 1,
    better: better("output_token_throughput_per_user"),
  });
  return figures.filter((f) => valueAt(level, f.key) !== undefined);
}

/**
 * A figure's value in one window of the summary: the window's own fields
 * for the client's ("client.throughput" is the window's "throughput"), its
 * "llm" object for the LLM's.
 */
export function windowValue(window: JsonObject, key: string): number | undefined {
  return valueAt(window, key.startsWith("client.") ? key.slice("client.".length) : key);
}

/** The figure's value in `unit`. */
export const scaled = (figure: Figure, value: number): number => value * figure.scale;
