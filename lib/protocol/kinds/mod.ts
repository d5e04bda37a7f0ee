/**
 * The service kinds (--service-kind), by name. Adding one: a file here
 * exporting a ServiceKindDef, its line below, and its option checks in
 * lib/cli/_client_options.ts (parseService), which names only registered kinds.
 *
 * @module
 */
import { buildRequests, type RequestPlan } from "../../input/requests.ts";
import { UsageError } from "../../types/errors.ts";
import type { ModelInfo } from "../../types/model.ts";
import type { InferenceClient } from "../types.ts";
import type { KindPlan, ServiceKindDef } from "./kind.ts";
import { openai } from "./openai.ts";
import { tfserving } from "./tfserving.ts";
import { torchserve } from "./torchserve.ts";
import { triton } from "./triton.ts";
import { tritonCApi } from "./triton_c_api.ts";

export type { KindPlan, ServiceKindDef } from "./kind.ts";

export const SERVICE_KINDS: Map<string, ServiceKindDef> = new Map([
  ["triton", triton],
  ["tfserving", tfserving],
  ["torchserve", torchserve],
  ["openai", openai],
  ["triton_c_api", tritonCApi],
]);

export function serviceKind(name: string): ServiceKindDef {
  const kind = SERVICE_KINDS.get(name);
  if (kind === undefined) throw new RangeError(`Unknown service kind "${name}"`);
  return kind;
}

/** The client of the plan's service kind. */
export async function createClient(plan: KindPlan): Promise<InferenceClient> {
  const timeout = plan.requestTimeoutMs > 0 ? { requestTimeoutMs: plan.requestTimeoutMs } : {};
  try {
    return await serviceKind(plan.serviceKind).createClient(plan, timeout);
  } catch (error) {
    // A URL or header the client cannot use is the user's to fix, like any option value.
    if (error instanceof RangeError) throw new UsageError([error.message]);
    throw error;
  }
}

/** The requests of the run: the kind's own, else built from the input data. */
export function buildServiceRequests(model: ModelInfo, plan: KindPlan): Promise<RequestPlan> {
  const kind = serviceKind(plan.serviceKind);
  return kind.buildRequests ? kind.buildRequests(model, plan) : buildRequests(model, plan);
}
