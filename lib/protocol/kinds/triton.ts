/** Triton and any KServe v2 server: HTTP (with --ssl-https-*) or gRPC (with --ssl-grpc-*), per -i. */
import { KServeHttpClient } from "../kserve_http.ts";
import { grpcTls, httpsTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const triton: ServiceKindDef = {
  async createClient(plan, options) {
    if (plan.protocol === "grpc") {
      // Loaded for gRPC runs only: protobuf, HTTP/2 and zlib would add about 30 ms to every start-up.
      const { GrpcClient } = await import("../grpc/client.ts");
      return new GrpcClient({
        ...clientBasics(plan, options),
        compression: plan.grpcCompression,
        streaming: plan.streaming,
        tls: await grpcTls(plan.grpcSsl),
      });
    }
    return new KServeHttpClient({
      ...clientBasics(plan, options),
      inputFormat: plan.inputTensorFormat,
      outputFormat: plan.outputTensorFormat,
      tls: await httpsTls(plan.httpsSsl),
    });
  },
};
