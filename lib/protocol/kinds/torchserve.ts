/** TorchServe's inference API over HTTP: the files named by --input-data, sent as they are. */
import { httpsTls } from "../tls.ts";
import type { ServiceKindDef } from "./kind.ts";

export const torchserve: ServiceKindDef = {
  async createClient(plan, options) {
    const { TorchServeClient } = await import("../torchserve.ts");
    return new TorchServeClient({
      url: plan.url,
      headers: plan.headers,
      ...options,
      tls: httpsTls(plan.httpsSsl),
    });
  },
};
