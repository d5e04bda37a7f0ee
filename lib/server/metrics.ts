/** Prometheus metrics in Triton's names: per-model counters and simulated GPU gauges. */
import type { SimulatedGpus } from "./gpu.ts";
import type { SimulatedModel } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import type { HttpHandler, HttpResponse } from "./_http.ts";
import { errorResponse } from "./_http.ts";

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
const encoder = new TextEncoder();

const us = (ns: number) => Math.round(ns / 1000);

const MODEL_METRICS: ReadonlyArray<[string, string, (m: SimulatedModel) => number]> = [
  [
    "nv_inference_request_success",
    "Number of successful inference requests, all batch sizes",
    (m) => m.stats.success.count,
  ],
  [
    "nv_inference_request_failure",
    "Number of failed inference requests, all batch sizes",
    (m) => m.stats.fail.count,
  ],
  [
    "nv_inference_count",
    "Number of inferences performed (does not include cached requests)",
    (m) => m.stats.inferenceCount,
  ],
  [
    "nv_inference_exec_count",
    "Number of model executions performed (does not include cached requests)",
    (m) => m.stats.executionCount,
  ],
  [
    "nv_inference_request_duration_us",
    "Cumulative inference request duration in microseconds (includes cached requests)",
    (m) => us(m.stats.success.ns + m.stats.fail.ns),
  ],
  [
    "nv_inference_queue_duration_us",
    "Cumulative inference queuing duration in microseconds (includes cached requests)",
    (m) => us(m.stats.queue.ns),
  ],
  [
    "nv_inference_compute_input_duration_us",
    "Cumulative compute input duration in microseconds (does not include cached requests)",
    (m) => us(m.stats.computeInput.ns),
  ],
  [
    "nv_inference_compute_infer_duration_us",
    "Cumulative compute inference duration in microseconds (does not include cached requests)",
    (m) => us(m.stats.computeInfer.ns),
  ],
  [
    "nv_inference_compute_output_duration_us",
    "Cumulative inference compute output duration in microseconds (does not include cached " +
    "requests)",
    (m) => us(m.stats.computeOutput.ns),
  ],
  [
    "nv_inference_pending_request_count",
    "Instantaneous number of pending requests awaiting execution per-model.",
    (m) => m.queued,
  ],
];

function family(name: string, help: string, type: string, samples: string[]): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${samples.join("")}`;
}

/** The metrics text at this moment (GPU utilization covers the time since the last call). */
export function renderMetrics(repository: ModelRepository, gpus: SimulatedGpus): string {
  const parts = MODEL_METRICS.map(([name, help, value]) =>
    family(
      name,
      help,
      name === "nv_inference_pending_request_count" ? "gauge" : "counter",
      repository.models.map((m) =>
        `${name}{model="${m.name}",version="${m.version}"} ${value(m)}\n`
      ),
    )
  );
  const samples = gpus.sample();
  const gauge = (name: string, help: string, value: (i: number) => number) =>
    family(
      name,
      help,
      "gauge",
      samples.map((s, i) => `${name}{gpu_uuid="${s.uuid}"} ${value(i)}\n`),
    );
  parts.push(
    gauge("nv_gpu_utilization", "GPU utilization rate [0.0 - 1.0)", (i) => samples[i].utilization),
    gauge(
      "nv_gpu_memory_total_bytes",
      "GPU total memory, in bytes",
      (i) => samples[i].memoryTotalBytes,
    ),
    gauge(
      "nv_gpu_memory_used_bytes",
      "GPU used memory, in bytes",
      (i) => samples[i].memoryUsedBytes,
    ),
    gauge("nv_gpu_power_usage", "GPU power usage in watts", (i) => samples[i].powerWatts),
  );
  return parts.join("");
}

export function createMetricsHandler(
  repository: ModelRepository,
  gpus: SimulatedGpus,
): HttpHandler {
  const notFound = errorResponse(404, "Not Found");
  return (request): HttpResponse => {
    if (request.path !== "/metrics") return notFound;
    return {
      status: 200,
      contentType: CONTENT_TYPE,
      body: encoder.encode(renderMetrics(repository, gpus)),
    };
  };
}
