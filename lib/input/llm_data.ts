/**
 * Requests of OpenAI-compatible services (--service-kind openai): JSON bodies
 * from perf_analyzer's openai input data, `{"data": [{"payload": [{...}]},
 * ...]}` (one step per entry, sent round-robin; an entry may also give its
 * "timestamp" for --fixed-schedule, and its "session_id" and "delay" for
 * --session-concurrency, as genai-perf writes them), prompts from a JSONL file
 * (--input-file, genai-perf's format: `{"text": "..."}` per line), or
 * synthetic prompts whose length in tokens of the run's tokenizer follows
 * --synthetic-input-tokens-mean/-stddev. Each step has one BYTES input,
 * "payload", holding the body in the shape of the endpoint (chat, completions,
 * embeddings, Triton's generate).
 */
import { type MediaOptions, mediaParts } from "./media.ts";
import { encodeBytesElements } from "./codec.ts";
import { type DataSet, type DataStep, locate, readDataFile } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { type ConversationOptions, makeConversations } from "./conversations.ts";
import { mulberry32 } from "./generate.ts";
import { readTimestamp, show } from "./json_data.ts";
import { JsonSyntaxError, parseDataJson } from "./_json_syntax.ts";
import type { ChatTemplate, Tokenizer } from "./tokenizer.ts";
import { endpointDef, type EndpointType, endpointTypeOf, type TurnBody } from "./llm_endpoints.ts";
import { renderTemplate } from "./llm_template.ts";
import type { Tensor } from "../types/tensor.ts";

/** Whether --endpoint alone names an API inferperf speaks (Triton's generate for any model). */
export function isLlmEndpoint(endpoint: string): boolean {
  return endpointTypeOf(endpoint) !== undefined;
}

/** The input holding each request's body (perf_analyzer's name). */
export const PAYLOAD = "payload";

/** Output lengths asked for: max_tokens normal around `mean`, at least 1. */
export interface OutputTokens {
  mean: number;
  stddev: number;
  /** --output-tokens-mean-deterministic: min_tokens and ignore_eos too, so lengths are exact. */
  deterministic: boolean;
}

/** Generated prompts or a dataset file (no payload file given). */
export interface SyntheticPrompts extends ConversationOptions {
  /** Prompt length in tokens (words without a tokenizer): normal with this mean and deviation, at least 1. */
  inputTokensMean: number;
  inputTokensStddev: number;
  /** Absent leaves the output length to the server. */
  outputTokens?: OutputTokens;
  /** Distinct synthetic prompts (conversations), sent round-robin (a file sends all its own). */
  count: number;
  /** `"stream": true`, with usage in the stream (stream_options.include_usage) where OpenAI's. */
  streaming: boolean;
  /** --random-seed: the same seed makes the same prompts and lengths. */
  seed: number;
  /** --input-file: prompts from a file instead of made-up ones. */
  inputFile?: string;
  /**
   * --output-tokens-mean-deterministic without a mean: the lengths of a
   * --sequence-distribution or of the file are made exact (min_tokens, ignore_eos).
   */
  exactLengths?: boolean;
  /** --session-concurrency: conversations of several turns run as sessions (else refused). */
  sessions?: boolean;
  /** --image-* and --audio-*: images and audio in each chat turn's content parts. */
  media?: MediaOptions;
  /** --rankings-passages (v1/ranking): passages per query, the texts of the next prompts. */
  rankingsPassages?: number;
  /** --extra-inputs: sampling parameters in every body, where its API keeps them. */
  extraInputs?: Record<string, unknown>;
  /** --endpoint-type template: the body's template (--extra-inputs payload_template). */
  payloadTemplate?: string;
}

export interface LlmDataOptions {
  /** -m: the "model" of every body that names none. */
  model: string;
  /** --endpoint-type (or the type of --endpoint): the body's shape. */
  endpointType: EndpointType;
  /** Payload files (--input-data); none: synthetic prompts. */
  paths: readonly string[];
  synthetic: SyntheticPrompts;
  /** Measures synthetic prompts; without one a word is a token. */
  tokenizer?: Tokenizer;
  /** --apply-chat-template: a chat prompt's length is that of the template rendered over it. */
  chatTemplate?: ChatTemplate;
}

const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** The "payload" input holding `body` as JSON text. */
export function payloadTensor(body: Record<string, unknown>): Tensor {
  // The data reader keeps integers beyond 2^53 exact as bigints: they go back out as written.
  const text = JSON.stringify(body, (_k, v) => typeof v === "bigint" ? rawJson(String(v)) : v);
  return { name: PAYLOAD, datatype: "BYTES", shape: [1], data: encodeBytesElements([text]) };
}

function stepOf(body: Record<string, unknown>, where: string): DataStep {
  return { inputs: [payloadTensor(body)], outputs: [], where };
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
    const body = isRecord(entry) ? single(entry[PAYLOAD]) : undefined;
    if (!isRecord(body) || keys.some((key) => !ENTRY_FIELDS.has(key))) {
      throw new InputError(
        `${where}: expected {"payload": [{...request body...}]}, one JSON object per request ` +
          '(beside it only "timestamp", "session_id" and "delay")',
      );
    }
    const step = stepOf(body.model === undefined ? { model, ...body } : body, where);
    const { timestamp, session_id: session, delay } = entry as Record<string, unknown>;
    locate(where, () => {
      if (timestamp !== undefined) step.timestampMs = readTimestamp(timestamp);
      if (session !== undefined) step.sessionId = readSessionId(session);
      if (delay !== undefined) step.delayMs = readDelay(delay);
    });
    return step;
  });
}

/** An entry's fields: the body, and what perf_analyzer reads beside it (genai-perf writes them). */
const ENTRY_FIELDS = new Set([PAYLOAD, "timestamp", "session_id", "delay"]);

/** A value alone or as a one-element array, as genai-perf writes each field. */
function single(value: unknown): unknown {
  return Array.isArray(value) && value.length === 1 ? value[0] : value;
}

function readSessionId(value: unknown): string {
  const id = single(value);
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" && Number.isInteger(id)) return String(id);
  throw new InputError(`"session_id" must be a string, got ${show(value)}`);
}

function readDelay(value: unknown): number {
  const ms = single(value);
  if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0) {
    throw new InputError(`"delay" must be whole milliseconds >= 0, got ${show(value)}`);
  }
  return ms;
}

/** Added to --random-seed for the images and audio, apart from the prompts' draws. */
const MEDIA_SEED = 0x3ed1a;

/** The request body of a user turn for the endpoint type, with --extra-inputs. */
function bodyOf(
  turn: TurnBody,
  options: { type: EndpointType; synthetic: SyntheticPrompts },
): Record<string, unknown> {
  const def = endpointDef(options.type);
  const extra = options.synthetic.extraInputs ?? {};
  const template = options.synthetic.payloadTemplate;
  const body = template === undefined ? def.body(turn) : renderTemplate(template, { turn, extra });
  if (Object.keys(extra).length > 0) Object.assign(def.samplingOf?.(body) ?? body, extra);
  return body;
}

/**
 * The steps of made-up or dataset conversations, in order: each turn a step
 * holding its session id, the wait after its answer (the next turn's delay)
 * and its timestamp.
 */
async function syntheticSteps(options: LlmDataOptions): Promise<DataStep[]> {
  const { synthetic } = options;
  const type = options.endpointType;
  const template = type === "chat" || type === "messages" ? options.chatTemplate : undefined;
  const conversations = await makeConversations(synthetic, {
    rng: mulberry32(synthetic.seed),
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    ...(template ? { chatTemplate: template } : {}),
  });
  const long = synthetic.sessions ? undefined : conversations.find((c) => c.turns.length > 1);
  if (long !== undefined) {
    throw new InputError(
      `${long.turns[1].where}: session "${long.sessionId}" has ${long.turns.length} turns, ` +
        "which need --session-concurrency N (each turn goes after the previous answer, with the history)",
    );
  }
  const noTokens = endpointDef(type).noTokens === true;
  const exact = synthetic.outputTokens?.deterministic === true || synthetic.exactLengths === true;
  const mediaRng = mulberry32(synthetic.seed + MEDIA_SEED);
  const media = new Map<object, Record<string, unknown>[]>();
  if (synthetic.media !== undefined) {
    for (const { turns } of conversations) {
      for (const turn of turns) media.set(turn, await mediaParts(synthetic.media, mediaRng));
    }
  }
  // A query's passages: the first texts of the conversations after its own, in a cycle.
  const passagesOf = (c: number) =>
    Array.from(
      { length: synthetic.rankingsPassages ?? 0 },
      (_, k) => conversations[(c + 1 + k) % conversations.length].turns[0].texts.join(" "),
    );
  const ranking = type === "rankings" || type === "rerank";
  return conversations.flatMap(({ sessionId, turns }, c) =>
    turns.map((turn, t) => {
      const body: TurnBody = {
        model: options.model,
        texts: turn.texts,
        exact,
        // Embeddings and rankings answer at once.
        streaming: synthetic.streaming && !noTokens,
        ...(turn.maxTokens === undefined || noTokens ? {} : { maxTokens: turn.maxTokens }),
        ...(turn.role === undefined ? {} : { role: turn.role }),
        ...(media.has(turn) ? { media: media.get(turn) } : {}),
        ...(ranking ? { passages: passagesOf(c) } : {}),
      };
      // A replayed payload goes as written.
      const step = stepOf(turn.body ?? bodyOf(body, { type, synthetic }), turn.where);
      step.sessionId = sessionId;
      if (t + 1 < turns.length) step.delayMs = turns[t + 1].delayBeforeMs ?? 0;
      if (turn.timestampMs !== undefined) step.timestampMs = turn.timestampMs;
      return step;
    })
  );
}

/** The steps of an OpenAI run, one stream; throws an InputError saying where. */
export async function loadLlmData(options: LlmDataOptions): Promise<DataSet> {
  if (options.paths.length === 0) return { streams: [await syntheticSteps(options)] };
  const steps: DataStep[] = [];
  for (const path of options.paths) steps.push(...await loadPayloads(path, options.model));
  return { streams: [steps] };
}
