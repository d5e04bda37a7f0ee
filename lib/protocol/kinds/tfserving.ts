/** TF Serving's Predict API over gRPC. */
import { grpcTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const tfserving: ServiceKindDef = {
  async createClient(plan, options) {
    const { TfServingClient } = await import("../tfserving.ts");
    return new TfServingClient({
      ...clientBasics(plan, options),
      compression: plan.grpcCompression,
      tls: await grpcTls(plan.grpcSsl),
      signatureName: plan.modelSignatureName,
      batchSize: plan.batchSize,
    });
  },
};
