/**
 * The headline figures of a load level, read from its summary JSON (a level
 * of docs/summary.schema.json) and from its windows: what repeat runs give a
 * confidence interval and `inferperf compare` tests, each knowing its unit
 * and which direction is better.
 */

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

const LLM_LATENCIES: ReadonlyArray<[string, string, readonly string[]]> = [
  ["time_to_first_token_ms", "Time to first token", ["avg", "p50", "p90", "p99"]],
  ["inter_token_latency_ms", "Inter-token latency", ["avg", "p50", "p90", "p99"]],
  ["request_latency_ms", "LLM request latency", ["avg", "p99"]],
];

const LLM_RATES: ReadonlyArray<[string, string, string]> = [
  ["request_throughput_per_sec", "Request throughput", "requests/sec"],
  ["output_token_throughput_tokens_per_sec", "Output token throughput", "tokens/sec"],
  ["request_goodput_per_sec", "Request goodput", "requests/sec"],
];

const PER_USER = "output_token_throughput_per_user_tokens_per_sec_per_user";

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
  const figures: Figure[] = [
    {
      key: "client.throughput",
      label: "Throughput",
      unit: "infer/sec",
      scale: 1,
      better: "higher",
    },
    {
      key: "client.avg_latency_us",
      label: "Avg latency",
      unit: "ms",
      scale: 1e-3,
      better: "lower",
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
      better: "lower",
    });
  }
  for (const [name, label, unit] of LLM_RATES) {
    figures.push({ key: `llm.${name}`, label, unit, scale: 1, better: "higher" });
  }
  for (const [name, label, stats] of LLM_LATENCIES) {
    for (const stat of stats) {
      figures.push({
        key: `llm.${name}.${stat}`,
        label: `${label} ${stat}`,
        unit: "ms",
        scale: 1,
        better: "lower",
      });
    }
  }
  figures.push({
    key: `llm.${PER_USER}.avg`,
    label: "Output token throughput per user avg",
    unit: "tokens/sec/user",
    scale: 1,
    better: "higher",
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
