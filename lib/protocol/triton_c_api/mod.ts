/** --service-kind triton_c_api: Triton's core library in this process. */
import type { ProfileConfig } from "../../cli/config.ts";
import { UsageError } from "../../cli/config.ts";
import { TritonCApiClient } from "./client.ts";
import { CApiSetupError } from "./server.ts";

export { TritonCApiClient } from "./client.ts";

/**
 * Starts the in-process server of a run and says so as perf_analyzer does
 * ("server is alive!"); setup problems are usage errors (one line, exit 99).
 */
export async function startCApiClient(
  config: ProfileConfig,
  options: { requestTimeoutMs?: number },
): Promise<TritonCApiClient> {
  try {
    const client = await TritonCApiClient.start({
      directory: config.tritonServerDirectory,
      repository: config.modelRepository,
      verbose: config.verbose > 0,
      ...options,
    });
    console.log("server is alive!");
    return client;
  } catch (error) {
    if (error instanceof CApiSetupError) throw new UsageError([error.message]);
    throw error;
  }
}
