/** Prometheus metrics in Triton's names: per-model counters and simulated GPU gauges. */
import type { GpuSample, SimulatedGpus } from "./gpu.ts";
import type { SimulatedModel } from "./model.ts";
import type { ModelRepository } from "./repository.ts";
import type { HttpHandler, HttpResponse } from "./_http.ts";
import { errorResponse } from "./_http.ts";

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
const encoder = new TextEncoder();

const us = (ns: number) => Math.round(ns / 1000);

interface Family<T> {
  name: string;
  help: string;
  type: "counter" | "gauge";
  value: (subject: T) => number;
}

const MODEL_FAMILIES: ReadonlyArray<Family<SimulatedModel>> = [
  {
    name: "nv_inference_request_success",
    help: "Number of successful inference requests, all batch sizes",
    type: "counter",
    value: (m) => m.stats.success.count,
  },
  {
    name: "nv_inference_request_failure",
    help: "Number of failed inference requests, all batch sizes",
    type: "counter",
    value: (m) => m.stats.fail.count,
  },
  {
    name: "nv_inference_count",
    help: "Number of inferences performed (does not include cached requests)",
    type: "counter",
    value: (m) => m.stats.inferenceCount,
  },
  {
    name: "nv_inference_exec_count",
    help: "Number of model executions performed (does not include cached requests)",
    type: "counter",
    value: (m) => m.stats.executionCount,
  },
  {
    name: "nv_inference_request_duration_us",
    help: "Cumulative inference request duration in microseconds (includes cached requests)",
    type: "counter",
    value: (m) => us(m.stats.success.ns + m.stats.fail.ns),
  },
  {
    name: "nv_inference_queue_duration_us",
    help: "Cumulative inference queuing duration in microseconds (includes cached requests)",
    type: "counter",
    value: (m) => us(m.stats.queue.ns),
  },
  {
    name: "nv_inference_compute_input_duration_us",
    help: "Cumulative compute input duration in microseconds (does not include cached requests)",
    type: "counter",
    value: (m) => us(m.stats.computeInput.ns),
  },
  {
    name: "nv_inference_compute_infer_duration_us",
    help:
      "Cumulative compute inference duration in microseconds (does not include cached requests)",
    type: "counter",
    value: (m) => us(m.stats.computeInfer.ns),
  },
  {
    name: "nv_inference_compute_output_duration_us",
    help:
      "Cumulative inference compute output duration in microseconds (does not include cached requests)",
    type: "counter",
    value: (m) => us(m.stats.computeOutput.ns),
  },
  {
    name: "nv_inference_pending_request_count",
    help: "Instantaneous number of pending requests awaiting execution per-model.",
    type: "gauge",
    value: (m) => m.queued,
  },
];

const GPU_FAMILIES: ReadonlyArray<Family<GpuSample>> = [
  {
    name: "nv_gpu_utilization",
    help: "GPU utilization rate [0.0 - 1.0)",
    type: "gauge",
    value: (g) => g.utilization,
  },
  {
    name: "nv_gpu_memory_total_bytes",
    help: "GPU total memory, in bytes",
    type: "gauge",
    value: (g) => g.memoryTotalBytes,
  },
  {
    name: "nv_gpu_memory_used_bytes",
    help: "GPU used memory, in bytes",
    type: "gauge",
    value: (g) => g.memoryUsedBytes,
  },
  {
    name: "nv_gpu_power_usage",
    help: "GPU power usage in watts",
    type: "gauge",
    value: (g) => g.powerWatts,
  },
];

const modelLabels = (m: SimulatedModel) => `model="${m.name}",version="${m.version}"`;
const gpuLabels = (g: GpuSample) => `gpu_uuid="${g.uuid}"`;

function render<T>(
  families: ReadonlyArray<Family<T>>,
  subjects: { all: readonly T[]; labels: (subject: T) => string },
): string {
  let text = "";
  for (const { name, help, type, value } of families) {
    text += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
    for (const s of subjects.all) text += `${name}{${subjects.labels(s)}} ${value(s)}\n`;
  }
  return text;
}

/** The metrics text at this moment (GPU utilization covers the time since the last call). */
export function renderMetrics(repository: ModelRepository, gpus: SimulatedGpus): string {
  return render(MODEL_FAMILIES, { all: repository.models, labels: modelLabels }) +
    render(GPU_FAMILIES, { all: gpus.sample(), labels: gpuLabels });
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
