/** TorchServe's inference API over HTTP: the files named by --input-data, sent as they are. */
import { httpsTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const torchserve: ServiceKindDef = {
  async createClient(plan, options) {
    const { TorchServeClient } = await import("../torchserve.ts");
    return new TorchServeClient({
      ...clientBasics(plan, options),
      tls: await httpsTls(plan.httpsSsl),
    });
  },
};
