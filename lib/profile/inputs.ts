/**
 * The requests a run's load sends: built from the input data (lib/input),
 * prepared by the client that sends them, with --request-parameter values
 * and their shared-memory placement.
 */
import {
  batchRequest,
  type PlannedRequest,
  type RequestPlan,
  scheduleTimestamps,
} from "../input/requests.ts";
import type { LoadInputs } from "../load/levels.ts";
import type { InferenceClient, PreparedRequest } from "../protocol/types.ts";
import type { OutputCheck } from "../input/validation.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { ModelInfo } from "../types/model.ts";
import type { ProfilePlan } from "./plan.ts";

type InputsPlan = Pick<
  ProfilePlan,
  "requestParameters" | "model" | "modelVersion" | "validationTolerance" | "fixedSchedule"
>;

/** The request with the --request-parameter values added. */
function withParameters(request: InferRequest, config: InputsPlan): InferRequest {
  if (config.requestParameters.length === 0) return request;
  const parameters = { ...request.parameters };
  for (const p of config.requestParameters) parameters[p.name] = p.value;
  return { ...request, parameters };
}

/**
 * The requests of each input-data stream for sequence models: nested data
 * streams are played back one per sequence, any other data forms one stream.
 */
function sequenceStreams(
  model: ModelInfo,
  options: { plan: RequestPlan; tolerance: number },
): PlannedRequest[][] {
  const { plan, tolerance } = options;
  if (!model.sequence || plan.dataSet.streams.length < 2) {
    return [plan.requests.map((request, i) => ({ request, check: plan.checks?.[i] }))];
  }
  return plan.dataSet.streams.map((steps) =>
    steps.map((step) => batchRequest(model, [step], { tolerance }))
  );
}

/**
 * The requests of `plan` prepared by `client`, with --request-parameter
 * values and, through `place`, their shared-memory placement.
 */
export function loadInputs(
  client: InferenceClient,
  options: {
    config: InputsPlan;
    model: ModelInfo;
    plan: RequestPlan;
    place?: (request: InferRequest) => InferRequest;
  },
): LoadInputs {
  const { config, model, plan } = options;
  const place = (r: InferRequest) => withParameters(options.place?.(r) ?? r, config);
  const target = { model: config.model, version: config.modelVersion };
  const prepared = plan.requests.map((r) => client.prepare(place(r), target));
  const checks = new Map<PreparedRequest, OutputCheck>();
  plan.checks?.forEach((check, i) => check && checks.set(prepared[i], check));
  const streams = sequenceStreams(model, { plan, tolerance: config.validationTolerance })
    .map((s) => s.map((p) => ({ ...p, request: place(p.request) })));
  return {
    streams,
    prepared,
    checks,
    ...(config.fixedSchedule ? { timestampsMs: scheduleTimestamps(plan.dataSet) } : {}),
  };
}
