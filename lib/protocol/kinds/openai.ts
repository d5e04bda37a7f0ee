/**
 * OpenAI-compatible servers and Triton's generate extension (--endpoint): the
 * payload files of --input-data, JSONL prompts or synthetic prompts measured
 * with --tokenizer, streamed as server-sent events.
 */
import { mulberry32 } from "../../input/generate.ts";
import { loadLlmData } from "../../input/llm_data.ts";
import { checkBatchSize } from "../../input/requests.ts";
import { loadChatTemplate, loadTokenizer } from "../../input/tokenizer.ts";
import { httpsTls } from "../tls.ts";
import { clientBasics, type ServiceKindDef } from "./kind.ts";

export const openai: ServiceKindDef = {
  async createClient(plan, options) {
    const loading = [
      import("../openai.ts"),
      loadTokenizer(plan.tokenizer),
      plan.applyChatTemplate ? loadChatTemplate(plan.tokenizer) : undefined,
    ] as const;
    // Both loaders read the model directory: whichever fails first in time would name a
    // different missing file from run to run, so the error is the first in this order.
    for (const outcome of await Promise.allSettled(loading)) {
      if (outcome.status === "rejected") throw outcome.reason;
    }
    const [{ OpenAiClient }, tokenizer, chatTemplate] = await Promise.all(loading);
    return new OpenAiClient({
      ...clientBasics(plan, options),
      endpoint: plan.endpoint,
      ...(plan.endpointType ? { endpointType: plan.endpointType } : {}),
      ...(plan.templateFields ? { template: plan.templateFields } : {}),
      tls: await httpsTls(plan.httpsSsl),
      ...(tokenizer ? { tokenizer } : {}),
      ...(chatTemplate ? { chatTemplate } : {}),
      ...(plan.models ? { perModel: true } : {}),
      ...(plan.urls ? { urls: plan.urls } : {}),
    });
  },
  async buildRequests(model, plan) {
    checkBatchSize(model, plan.batchSize);
    const tokenizer = await loadTokenizer(plan.tokenizer);
    const chatTemplate = plan.applyChatTemplate
      ? await loadChatTemplate(plan.tokenizer)
      : undefined;
    const load = (name: string) =>
      loadLlmData({
        model: name,
        endpointType: plan.endpointType ?? "chat",
        paths: plan.inputData.paths,
        synthetic: plan.syntheticPrompts,
        ...(tokenizer ? { tokenizer } : {}),
        ...(chatTemplate ? { chatTemplate } : {}),
      });
    const dataSet = await load(plan.model);
    const requestsOf = (set: typeof dataSet) =>
      set.streams[0].map((step) => ({ inputs: step.inputs, outputs: [] }));
    if (plan.models === undefined) return { requests: requestsOf(dataSet), dataSet };
    // The same prompts for every model (the data is seeded), each request naming one model.
    const { names, selection } = plan.models;
    const perModel = [requestsOf(dataSet)];
    for (const name of names.slice(1)) perModel.push(requestsOf(await load(name)));
    const rng = mulberry32(MODEL_SEED);
    const count = perModel[0].length * names.length;
    const requests = Array.from({ length: count }, (_, k) => {
      const m = selection === "random" ? Math.floor(rng() * names.length) : k % names.length;
      return perModel[m][Math.floor(k / names.length)];
    });
    return { requests, dataSet };
  },
};

/** Seed of --model-selection-strategy random: runs repeat exactly. */
const MODEL_SEED = 0x30de1;
