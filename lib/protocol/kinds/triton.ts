/** Triton and any KServe v2 server: HTTP (with --ssl-https-*) or gRPC (with --ssl-grpc-*), per -i. */
import { KServeHttpClient } from "../kserve_http.ts";
import { grpcTls, httpsTls } from "../tls.ts";
import type { ServiceKindDef } from "./kind.ts";

export const triton: ServiceKindDef = {
  async createClient(plan, options) {
    if (plan.protocol === "grpc") {
      // Loaded for gRPC runs only: protobuf, HTTP/2 and zlib would add about 30 ms to every start-up.
      const { GrpcClient } = await import("../grpc/client.ts");
      return new GrpcClient({
        url: plan.url,
        headers: plan.headers,
        compression: plan.grpcCompression,
        streaming: plan.streaming,
        tls: grpcTls(plan.grpcSsl),
        ...options,
      });
    }
    return new KServeHttpClient({
      url: plan.url,
      headers: plan.headers,
      inputFormat: plan.inputTensorFormat,
      outputFormat: plan.outputTensorFormat,
      tls: httpsTls(plan.httpsSsl),
      ...options,
    });
  },
};
