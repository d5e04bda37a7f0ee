/**
 * What requests carry: the tensor codec, generated data, data files and
 * directories, LLM payloads and prompts, chat sessions, output validation,
 * the requests of a run (requests.ts), the input part of a plan (plan.ts) and
 * the input-data template of a model (template.ts, `inferperf input-template`).
 * May import lib/types only.
 *
 * @module
 */
export * from "./codec.ts";
export * from "./generate.ts";
export * from "./errors.ts";
export * from "./shape.ts";
export * from "./data_set.ts";
export * from "./json_data.ts";
export * from "./directory_data.ts";
export * from "./input_data.ts";
export * from "./llm_data.ts";
export type * from "./plan.ts";
export * from "./requests.ts";
export * from "./sessions.ts";
export * from "./validation.ts";
