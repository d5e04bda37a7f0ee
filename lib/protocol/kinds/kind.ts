/** What a service kind is: the interface every entry of the registry (mod.ts) implements. */
import type { InputPlan } from "../../input/plan.ts";
import type { RequestPlan } from "../../input/requests.ts";
import type { ModelInfo } from "../../types/model.ts";
import type { ClientPlan } from "../plan.ts";
import type { InferenceClient } from "../types.ts";

/** What of a run's plan a service kind reads (-v: triton_c_api shows the server's log). */
export type KindPlan = ClientPlan & InputPlan & { batchSize: number; verbose: number };

export interface ServiceKindDef {
  /**
   * The client of a run (or of one --workers thread). Its protocol module
   * should load here, when the kind is used: each adds to start-up.
   */
  createClient(plan: KindPlan, options: { requestTimeoutMs?: number }): Promise<InferenceClient>;
  /** The requests of a run; absent: built from the input data (lib/input/requests.ts). */
  buildRequests?(model: ModelInfo, plan: KindPlan): Promise<RequestPlan>;
}

/** What every client takes: the URL, the headers and the request timeout. */
export function clientBasics(
  plan: Pick<KindPlan, "url" | "headers">,
  options: { requestTimeoutMs?: number },
): { url: string; headers: Record<string, string>; requestTimeoutMs?: number } {
  return { url: plan.url, headers: plan.headers, ...options };
}
