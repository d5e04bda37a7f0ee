/** TF Serving's Predict API over gRPC. */
import { grpcTls } from "../tls.ts";
import type { ServiceKindDef } from "./kind.ts";

export const tfserving: ServiceKindDef = {
  async createClient(plan, options) {
    const { TfServingClient } = await import("../tfserving.ts");
    return new TfServingClient({
      url: plan.url,
      headers: plan.headers,
      ...options,
      compression: plan.grpcCompression,
      tls: grpcTls(plan.grpcSsl),
      signatureName: plan.modelSignatureName,
      batchSize: plan.batchSize,
    });
  },
};
