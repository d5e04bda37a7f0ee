/**
 * OpenAI-compatible servers (--endpoint): the payload files of --input-data
 * or synthetic prompts, streamed as server-sent events with --streaming.
 */
import { loadLlmData } from "../../input/llm_data.ts";
import { checkBatchSize } from "../../input/requests.ts";
import { httpsTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const openai: ServiceKindDef = {
  async createClient(plan, options) {
    const { OpenAiClient } = await import("../openai.ts");
    return new OpenAiClient({
      ...clientBasics(plan, options),
      endpoint: plan.endpoint,
      tls: httpsTls(plan.httpsSsl),
    });
  },
  async buildRequests(model, plan) {
    checkBatchSize(model, plan.batchSize);
    const dataSet = await loadLlmData({
      model: plan.model,
      endpoint: plan.endpoint,
      paths: plan.inputData.paths,
      synthetic: plan.syntheticPrompts,
    });
    const requests = dataSet.streams[0].map((step) => ({ inputs: step.inputs, outputs: [] }));
    return { requests, dataSet };
  },
};
