/**
 * The columns of a search's CSVs under Model Analyzer's field names
 * (inference_output_fields, server_output_fields), with its headers and
 * defaults: a request-rate search shows `request_rate` where a concurrency
 * search shows `concurrency`.
 */
import type { ModelConfig } from "../protocol/model_config.ts";
import type { PointRecord } from "../sweep/mod.ts";
import { UsageError } from "../types/errors.ts";
import type { LevelResult } from "../types/results.ts";

/** What a row of metrics-model-inference.csv is about. */
export interface FieldRow {
  model: string;
  variant: string;
  config: ModelConfig;
  record: PointRecord;
  satisfies: boolean;
  /** A concurrent search's combination (the configurations measured together). */
  combination?: string;
  /** An ensemble's composing models' configurations: their instance groups are shown. */
  composing?: readonly ModelConfig[];
}

interface Field {
  header: string;
  value(row: FieldRow): string;
}

const ms = (us: number | undefined) => us === undefined ? "" : (us / 1000).toFixed(1);
const server = (r: LevelResult) => r.server?.[0];

/** `2:CPU`, Model Analyzer's instance group column (counts of every group, its kind). */
export function instanceGroupText(config: ModelConfig): string {
  const groups = config.instance_group ?? [];
  if (groups.length === 0) return "1:AUTO";
  const count = groups.reduce((n, g) => n + Number(g.count ?? 1), 0);
  const kind = String(groups[0]!.kind ?? "KIND_AUTO").replace(/^KIND_/, "");
  return `${count}:${kind}`;
}

const latency = (p: number): Field => ({
  header: `p${p} Latency (ms)`,
  value: (row) => ms(row.record.result.client.percentilesUs.get(p)),
});

const INFERENCE: Record<string, Field> = {
  model_name: { header: "Model", value: (row) => row.model },
  batch_size: { header: "Batch", value: (row) => String(row.record.point.batchSize) },
  concurrency: {
    header: "Concurrency",
    value: (row) => row.record.point.mode === "concurrency" ? String(row.record.point.value) : "",
  },
  request_rate: {
    header: "Request Rate",
    value: (row) => row.record.point.mode === "request_rate" ? String(row.record.point.value) : "",
  },
  model_config_path: { header: "Model Config Path", value: (row) => row.variant },
  combination: { header: "Combination", value: (row) => row.combination ?? "" },
  instance_group: {
    header: "Instance Group",
    value: (row) =>
      row.composing?.map(instanceGroupText).join("+") ?? instanceGroupText(row.config),
  },
  max_batch_size: {
    header: "Max Batch Size",
    value: (row) => String(row.config.max_batch_size ?? 0),
  },
  satisfies_constraints: {
    header: "Satisfies Constraints",
    value: (row) => row.satisfies ? "Yes" : "No",
  },
  perf_throughput: {
    header: "Throughput (infer/sec)",
    value: (row) => row.record.result.client.throughput.toFixed(1),
  },
  perf_latency_avg: {
    header: "Avg Latency (ms)",
    value: (row) => ms(row.record.result.client.avgLatencyUs),
  },
  perf_latency_p90: latency(90),
  perf_latency_p95: latency(95),
  perf_latency_p99: latency(99),
  perf_client_send_recv: {
    header: "Client Send/Recv (ms)",
    value: (row) => ms(row.record.result.client.avgSendUs + row.record.result.client.avgRecvUs),
  },
  perf_client_response_wait: {
    header: "Response Wait Time (ms)",
    value: (row) => ms(row.record.result.client.avgWaitUs),
  },
  perf_server_queue: {
    header: "Server Queue time (ms)",
    value: (row) => ms(server(row.record.result)?.queueUs),
  },
  perf_server_compute_input: {
    header: "Server Compute Input time (ms)",
    value: (row) => ms(server(row.record.result)?.computeInputUs),
  },
  perf_server_compute_infer: {
    header: "Server Compute Infer time (ms)",
    value: (row) => ms(server(row.record.result)?.computeInferUs),
  },
  perf_server_compute_output: {
    header: "Server Compute Output time (ms)",
    value: (row) => ms(server(row.record.result)?.computeOutputUs),
  },
  cpu_used_ram: {
    header: "RAM Usage (MB)",
    value: (row) => row.record.result.serverRamMb?.toFixed(1) ?? "",
  },
};

/** A row of metrics-server-only.csv: the most memory any point of a variant saw. */
export interface ServerRow {
  model: string;
  variant: string;
  ramMb: number;
}

const SERVER: Record<string, { header: string; value(row: ServerRow): string }> = {
  model_name: { header: "Model", value: (row) => row.model },
  model_config_path: { header: "Model Config Path", value: (row) => row.variant },
  cpu_used_ram: { header: "RAM Usage (MB)", value: (row) => row.ramMb.toFixed(1) },
};

/** Model Analyzer's default inference columns; `request_rate` in place of concurrency when asked. */
export function defaultInferenceFields(requestRate: boolean): string[] {
  return [
    "model_name",
    "batch_size",
    requestRate ? "request_rate" : "concurrency",
    "model_config_path",
    "instance_group",
    "max_batch_size",
    "satisfies_constraints",
    "perf_throughput",
    "perf_latency_p99",
  ];
}

/** inferperf's server columns: this CPU server has no GPU metrics, its memory instead. */
export const DEFAULT_SERVER_FIELDS = ["model_name", "model_config_path", "cpu_used_ram"];

/** Problems with the fields given to `option` (unknown names), for the config's error list. */
export function checkFields(
  fields: readonly string[],
  options: { option: string; server: boolean },
): string[] {
  const known = Object.keys(options.server ? SERVER : INFERENCE);
  const unknown = fields.filter((f) => !known.includes(f));
  return unknown.length === 0 ? [] : [
    `Unknown field${unknown.length > 1 ? "s" : ""} ${
      unknown.join(", ")
    } for ${options.option}: expected ${known.join(", ")}${
      options.server ? " (no GPU metrics: this server has none)" : ""
    }`,
  ];
}

/** CSV rows (header first) of `rows` under `fields`. Throws UsageError for an unknown field. */
export function inferenceTable(fields: readonly string[], rows: readonly FieldRow[]): string[][] {
  const errors = checkFields(fields, { option: "inference_output_fields", server: false });
  if (errors.length > 0) throw new UsageError(errors);
  const columns = fields.map((f) => INFERENCE[f]!);
  return [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => c.value(row)))];
}

export function serverTable(fields: readonly string[], rows: readonly ServerRow[]): string[][] {
  const errors = checkFields(fields, { option: "server_output_fields", server: true });
  if (errors.length > 0) throw new UsageError(errors);
  const columns = fields.map((f) => SERVER[f]!);
  return [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => c.value(row)))];
}
