/**
 * The requests of a run: input data loaded or generated (lib/input), then
 * batched into requests with the checks of their responses. Every problem is
 * an InputError saying where, raised before any load is sent.
 */
import { type Batch, batchSteps, type DataSet, type DataStep, makeBatch } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { type InputDataSpec, loadDataSet } from "./input_data.ts";
import { createOutputCheck, type OutputCheck } from "./validation.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { ModelInfo } from "../types/model.ts";

export { InputError };

export interface InputOptions {
  batchSize: number;
  shapes: Map<string, number[]>;
  inputData: InputDataSpec;
  stringLength: number;
  stringData?: string;
  /** Allowed difference of float outputs in validation; 0 compares bytes. */
  validationTolerance: number;
}

export interface PlannedRequest {
  request: InferRequest;
  /** Present when the steps have validation data for some output. */
  check?: OutputCheck;
}

export interface RequestPlan {
  /**
   * Sent round-robin: the steps of every stream in order, `batchSize`
   * consecutive steps per request (perf_analyzer's order).
   */
  requests: InferRequest[];
  /** Checks of the responses, by request index; absent when there is no validation data. */
  checks?: (OutputCheck | undefined)[];
  /** The data as loaded, for playing streams back per sequence. */
  dataSet: DataSet;
}

/** Rejects batch sizes the model cannot take, with perf_analyzer's messages. */
export function checkBatchSize(model: ModelInfo, batchSize: number): void {
  if (batchSize <= 1) return;
  if (model.maxBatchSize === 0) {
    throw new InputError(
      `can not specify batch size > 1 as the model does not support batching (-b ${batchSize}, ` +
        `model "${model.name}" has max_batch_size 0)`,
    );
  }
  if (batchSize > model.maxBatchSize) {
    throw new InputError(
      `expecting batch size <= ${model.maxBatchSize} for model "${model.name}" (-b ${batchSize})`,
    );
  }
  if (model.sequence) {
    throw new InputError(
      `can not specify batch size > 1 when using a sequence model (-b ${batchSize})`,
    );
  }
}

function plan(model: ModelInfo, batch: Batch, tolerance: number): PlannedRequest {
  const request = { inputs: batch.inputs, outputs: model.outputs.map((o) => o.name) };
  if (batch.outputs.length === 0) return { request };
  const steps = batch.steps.map((s) => s.where);
  return { request, check: createOutputCheck(batch.outputs, { steps, tolerance }) };
}

/**
 * The request of consecutive steps (one per batch element) and the check of
 * its response; for playing a stream back step by step (sequences).
 */
export function batchRequest(
  model: ModelInfo,
  steps: readonly DataStep[],
  options: { tolerance: number },
): PlannedRequest {
  return plan(model, makeBatch(steps, { batched: model.maxBatchSize > 0 }), options.tolerance);
}

/**
 * --fixed-schedule: when each step is due, ms from the start of the load,
 * from the steps' "timestamp" in file order. Throws an InputError naming the
 * step without a timestamp or whose timestamp is earlier than the previous one.
 */
export function scheduleTimestamps(dataSet: DataSet): number[] {
  const steps = dataSet.streams.flat();
  const timestamps: number[] = [];
  steps.forEach((step, i) => {
    const ms = step.timestampMs;
    if (ms === undefined) {
      throw new InputError(
        `${step.where}: no "timestamp": --fixed-schedule sends each input-data step at its ` +
          '"timestamp" (ms), so every step of a JSON --input-data file needs one',
      );
    }
    if (i > 0 && ms < timestamps[i - 1]) {
      throw new InputError(
        `${step.where}: "timestamp" ${ms} is earlier than ${timestamps[i - 1]} of ` +
          `${steps[i - 1].where}: --fixed-schedule needs the steps in send order`,
      );
    }
    timestamps.push(ms);
  });
  return timestamps;
}

/** Loads the data and builds the requests; throws an InputError before anything is sent. */
export async function buildRequests(model: ModelInfo, options: InputOptions): Promise<RequestPlan> {
  checkBatchSize(model, options.batchSize);
  const dataSet = await loadDataSet(options.inputData, {
    model,
    shapes: options.shapes,
    stringLength: options.stringLength,
    stringData: options.stringData,
  });
  const planned = batchSteps(dataSet.streams.flat(), {
    batchSize: options.batchSize,
    batched: model.maxBatchSize > 0,
  }).map((batch) => plan(model, batch, options.validationTolerance));
  const requests = planned.map((p) => p.request);
  if (planned.every((p) => p.check === undefined)) return { requests, dataSet };
  return { requests, checks: planned.map((p) => p.check), dataSet };
}
