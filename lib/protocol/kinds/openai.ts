/**
 * OpenAI-compatible servers and Triton's generate extension (--endpoint): the
 * payload files of --input-data, JSONL prompts or synthetic prompts measured
 * with --tokenizer, streamed as server-sent events.
 */
import { loadLlmData } from "../../input/llm_data.ts";
import { checkBatchSize } from "../../input/requests.ts";
import { loadTokenizer } from "../../input/tokenizer.ts";
import { httpsTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const openai: ServiceKindDef = {
  async createClient(plan, options) {
    const [{ OpenAiClient }, tokenizer] = await Promise.all([
      import("../openai.ts"),
      loadTokenizer(plan.tokenizer),
    ]);
    return new OpenAiClient({
      ...clientBasics(plan, options),
      endpoint: plan.endpoint,
      tls: await httpsTls(plan.httpsSsl),
      ...(tokenizer ? { tokenizer } : {}),
    });
  },
  async buildRequests(model, plan) {
    checkBatchSize(model, plan.batchSize);
    const tokenizer = await loadTokenizer(plan.tokenizer);
    const dataSet = await loadLlmData({
      model: plan.model,
      endpoint: plan.endpoint,
      paths: plan.inputData.paths,
      synthetic: plan.syntheticPrompts,
      ...(tokenizer ? { tokenizer } : {}),
    });
    const requests = dataSet.streams[0].map((step) => ({ inputs: step.inputs, outputs: [] }));
    return { requests, dataSet };
  },
};
