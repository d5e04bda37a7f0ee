/**
 * Requests of OpenAI-compatible services (--service-kind openai): JSON bodies
 * from perf_analyzer's openai input data, `{"data": [{"payload": [{...}]},
 * ...]}` (one step per entry, sent round-robin), or synthetic prompts whose
 * length in words follows --synthetic-input-tokens-mean/-stddev. Each step
 * has one BYTES input, "payload", holding the body.
 */
import { encodeBytesElements } from "./codec.ts";
import { type DataSet, type DataStep, readDataFile } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { mulberry32, type Rng } from "./generate.ts";
import { JsonSyntaxError, parseDataJson } from "./_json_syntax.ts";

/** The OpenAI-compatible endpoints whose requests and answers inferperf knows. */
export const OPENAI_ENDPOINTS = ["v1/chat/completions", "v1/completions"] as const;

/** The input holding each request's body (perf_analyzer's name). */
export const PAYLOAD = "payload";

/** Synthetic prompts (no payload file given). */
export interface SyntheticPrompts {
  /** Prompt length in words: normal with this mean and deviation, at least 1. */
  inputTokensMean: number;
  inputTokensStddev: number;
  /** max_tokens of every request; absent leaves it to the server. */
  outputTokens?: number;
  /** Distinct prompts, sent round-robin. */
  count: number;
  /** `"stream": true`, with usage in the stream (stream_options.include_usage). */
  streaming: boolean;
}

export interface LlmDataOptions {
  /** -m: the "model" of every body that names none. */
  model: string;
  /** --endpoint: chat bodies carry messages, completion bodies a prompt. */
  endpoint: string;
  /** Payload files (--input-data); none: synthetic prompts. */
  paths: readonly string[];
  synthetic: SyntheticPrompts;
  /** Default: a fixed seed, so runs send the same prompts. */
  rng?: Rng;
}

const PROMPT_SEED = 0x11f;
const WORDS = (
  "time year people way day man thing woman life child world school state family student " +
  "group country problem hand part place case week company system program question work " +
  "government number night point home water room mother area money story fact month lot " +
  "right study book eye job word business issue side kind head house service friend father"
).split(" ");

const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

function stepOf(body: Record<string, unknown>, where: string): DataStep {
  // The data reader keeps integers beyond 2^53 exact as bigints: they go back out as written.
  const text = JSON.stringify(body, (_k, v) => typeof v === "bigint" ? rawJson(String(v)) : v);
  return {
    inputs: [{ name: PAYLOAD, datatype: "BYTES", shape: [1], data: encodeBytesElements([text]) }],
    outputs: [],
    where,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function loadPayloads(path: string, model: string): Promise<DataStep[]> {
  let root: unknown;
  try {
    root = parseDataJson(new TextDecoder().decode(await readDataFile(path)));
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new InputError(
      `"${path}" line ${error.line}, column ${error.column}: invalid JSON: ${error.message}`,
    );
  }
  if (!isRecord(root) || !Array.isArray(root.data) || root.data.length === 0) {
    throw new InputError(
      `"${path}": OpenAI input data must be {"data": [{"payload": [{...request body...}]}, ...]}`,
    );
  }
  return root.data.map((entry, i) => {
    const where = `"${path}" data[${i}]`;
    const keys = isRecord(entry) ? Object.keys(entry) : [];
    const payload = isRecord(entry) ? entry[PAYLOAD] : undefined;
    const body = Array.isArray(payload) && payload.length === 1 ? payload[0] : payload;
    if (keys.length !== 1 || !isRecord(body)) {
      throw new InputError(
        `${where}: expected {"payload": [{...request body...}]}, one JSON object per request`,
      );
    }
    return stepOf(body.model === undefined ? { model, ...body } : body, where);
  });
}

/** A standard normal sample (Box-Muller). */
function gaussian(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

function syntheticSteps(options: LlmDataOptions): DataStep[] {
  const { synthetic, model } = options;
  const rng = options.rng ?? mulberry32(PROMPT_SEED);
  const chat = options.endpoint.includes("chat");
  return Array.from({ length: synthetic.count }, (_, i) => {
    const length = Math.max(
      1,
      Math.round(synthetic.inputTokensMean + synthetic.inputTokensStddev * gaussian(rng)),
    );
    const words = Array.from({ length }, () => WORDS[Math.floor(rng() * WORDS.length)]);
    const prompt = words.join(" ");
    const body: Record<string, unknown> = chat
      ? { model, messages: [{ role: "user", content: prompt }] }
      : { model, prompt };
    if (synthetic.outputTokens !== undefined) body.max_tokens = synthetic.outputTokens;
    if (synthetic.streaming) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return stepOf(body, `synthetic prompt ${i} (${length} words)`);
  });
}

/** The steps of an OpenAI run, one stream; throws an InputError saying where. */
export async function loadLlmData(options: LlmDataOptions): Promise<DataSet> {
  if (options.paths.length === 0) return { streams: [syntheticSteps(options)] };
  const steps: DataStep[] = [];
  for (const path of options.paths) steps.push(...await loadPayloads(path, options.model));
  return { streams: [steps] };
}
