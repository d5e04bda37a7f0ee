/**
 * AIPerf's dataset files (--input-file with --custom-dataset-type, or a
 * local ShareGPT file with --public-dataset sharegpt) read into
 * conversations: single_turn (one JSON object per line, each its own
 * conversation), multi_turn (a line per conversation, {"session_id",
 * "turns": [...]}, lines with the same session_id joined), random_pool
 * (lines drawn at random, --conversation-num of them; a directory makes a
 * pool per file and each conversation takes one entry of each),
 * mooncake_trace (a line per request: "timestamp", "input_length",
 * "output_length" and "hash_ids", prompts made of one shared block per hash
 * id), ShareGPT (a JSON array of {"conversations": [{"value"}, ...]}:
 * the first message is the prompt, the second's length the output length),
 * and the production traces and replayed payloads of traces.ts.
 */
import { locate, readDataFile, readJsonFile } from "./data_set.ts";
import { InputError } from "./errors.ts";
import type { Rng } from "./generate.ts";
import { show } from "./json_data.ts";
import type { PromptMaker } from "./prompts.ts";
import type { Tokenizer } from "./tokenizer.ts";
import type { Conversation, DatasetType, TurnSpec } from "./conversation.ts";

export { DATASET_TYPES, type DatasetType } from "./conversation.ts";

export type { Conversation, TurnSpec } from "./conversation.ts";

export interface DatasetOptions {
  type: DatasetType;
  path: string;
  /** random_pool: the conversations to draw. */
  count: number;
  rng: Rng;
  maker: PromptMaker;
  /** mooncake_trace: tokens per hash block. */
  blockSize: number;
  tokenizer?: Tokenizer;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function jsonLines(path: string): Promise<Array<{ entry: unknown; where: string }>> {
  const lines = new TextDecoder().decode(await readDataFile(path)).split(/\r?\n/);
  const entries: Array<{ entry: unknown; where: string }> = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `"${path}" line ${i + 1}`;
    try {
      entries.push({ entry: JSON.parse(line), where });
    } catch (error) {
      throw new InputError(`${where}: invalid JSON: ${(error as Error).message}`);
    }
  });
  if (entries.length === 0) throw new InputError(`"${path}" holds no entry`);
  return entries;
}

function optionalInteger(entry: Record<string, unknown>, key: string, where: string) {
  const value = entry[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InputError(`${where}: "${key}" must be an integer >= 0, got ${show(value)}`);
  }
  return value;
}

const MEDIA = ["image", "images", "audio", "audios"];

/** The texts of an entry: "text", "texts" (strings, or {"name", "contents"}), or "text_input". */
function textsOf(entry: unknown, where: string): string[] {
  const fail = (why: string): never => {
    throw new InputError(`${where}: ${why}`);
  };
  if (!isRecord(entry)) return fail('expected a JSON object such as {"text": "..."}');
  const media = MEDIA.find((key) => entry[key] !== undefined);
  if (media !== undefined) return fail(`"${media}" is not supported here: text turns only`);
  const text = entry.text ?? entry.text_input;
  if (typeof text === "string") {
    if (entry.texts !== undefined) return fail('"text" and "texts" can not both be given');
    return [text];
  }
  const texts = entry.texts;
  if (!Array.isArray(texts) || texts.length === 0) {
    return fail('expected {"text": "..."} (or "texts": [...], or "text_input")');
  }
  return texts.flatMap((item) => {
    if (typeof item === "string") return [item];
    const contents = isRecord(item) ? item.contents : undefined;
    if (Array.isArray(contents) && contents.every((c) => typeof c === "string")) return contents;
    return fail(`"texts" items must be strings or {"name": ..., "contents": ["..."]}`);
  });
}

function turnOf(entry: unknown, where: string): TurnSpec {
  const texts = textsOf(entry, where);
  const record = entry as Record<string, unknown>;
  const timestampMs = optionalInteger(record, "timestamp", where);
  const delayBeforeMs = optionalInteger(record, "delay", where);
  const role = record.role ?? undefined;
  if (role !== undefined && (typeof role !== "string" || role === "")) {
    throw new InputError(`${where}: "role" must be a string, got ${show(role)}`);
  }
  return {
    texts,
    where,
    ...(role === undefined ? {} : { role }),
    ...(timestampMs === undefined ? {} : { timestampMs }),
    ...(delayBeforeMs === undefined ? {} : { delayBeforeMs }),
  };
}

function sessionIdOf(entry: Record<string, unknown>, where: string): string | undefined {
  const id = entry.session_id;
  if (id === undefined || id === null) return undefined;
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number") return String(id);
  throw new InputError(`${where}: "session_id" must be a string, got ${show(id)}`);
}

/** Conversations in the order their first lines appear, turns grouped by session id. */
function grouped(items: Array<{ id: string | undefined; turns: TurnSpec[] }>): Conversation[] {
  const byId = new Map<string, Conversation>();
  items.forEach(({ id, turns }, i) => {
    const sessionId = id ?? `conversation-${i}`;
    const conversation = byId.get(sessionId) ?? { sessionId, turns: [] };
    conversation.turns.push(...turns);
    byId.set(sessionId, conversation);
  });
  return [...byId.values()];
}

async function singleTurn(path: string): Promise<Conversation[]> {
  return (await jsonLines(path)).map(({ entry, where }, i) => ({
    sessionId: `conversation-${i}`,
    turns: [turnOf(entry, where)],
  }));
}

async function multiTurn(path: string): Promise<Conversation[]> {
  return grouped((await jsonLines(path)).map(({ entry, where }) => {
    if (!isRecord(entry) || !Array.isArray(entry.turns) || entry.turns.length === 0) {
      throw new InputError(`${where}: expected {"session_id": "...", "turns": [{"text": "..."}]}`);
    }
    return {
      id: sessionIdOf(entry, where),
      turns: entry.turns.map((turn, t) => turnOf(turn, `${where} turns[${t}]`)),
    };
  }));
}

async function randomPool(options: DatasetOptions): Promise<Conversation[]> {
  const { path, rng, count } = options;
  let files = [path];
  const stat = await Deno.stat(path).catch(() => {
    throw new InputError(`"${path}": no such file or directory`);
  });
  if (stat.isDirectory) {
    files = [];
    for await (const e of Deno.readDir(path)) if (e.isFile) files.push(`${path}/${e.name}`);
    files.sort();
  }
  const pools = await Promise.all(
    files.map(async (file) =>
      (await jsonLines(file)).map(({ entry, where }) => ({ texts: textsOf(entry, where), where }))
    ),
  );
  return Array.from({ length: count }, (_, i) => {
    const picks = pools.map((pool) => pool[Math.floor(rng() * pool.length)]);
    return {
      sessionId: `conversation-${i}`,
      turns: [{
        texts: picks.flatMap((p) => p.texts),
        where: picks.map((p) => p.where).join(" + "),
      }],
    };
  });
}

async function mooncakeTrace(options: DatasetOptions): Promise<Conversation[]> {
  const { maker, rng, blockSize } = options;
  const conversations = grouped((await jsonLines(options.path)).map(({ entry, where }) => {
    if (!isRecord(entry)) throw new InputError(`${where}: expected a JSON object`);
    const length = optionalInteger(entry, "input_length", where);
    const output = optionalInteger(entry, "output_length", where);
    const hashIds = entry.hash_ids ?? [];
    if (!Array.isArray(hashIds) || hashIds.some((h) => !Number.isInteger(h))) {
      throw new InputError(`${where}: "hash_ids" must be an array of integers`);
    }
    let text = entry.text_input;
    if (typeof text !== "string") {
      if (length === undefined || length < 1) {
        throw new InputError(`${where}: give "input_length" (>= 1) or "text_input"`);
      }
      text = hashIds.length > 0
        ? locate(where, () => maker.fromBlocks(length, { hashIds, blockSize, rng }))
        : maker.make(length, rng);
    }
    const turn = turnOf({ text, timestamp: entry.timestamp, delay: entry.delay }, where);
    return {
      id: sessionIdOf(entry, where),
      turns: [{ ...turn, ...(output === undefined ? {} : { maxTokens: output }) }],
    };
  }));
  // A trace replays in time order (AIPerf sorts it too); the sort is stable for equal times.
  const start = (c: Conversation) => c.turns[0].timestampMs ?? 0;
  return conversations.sort((a, b) => start(a) - start(b));
}

/** vLLM's ShareGPT filter, as AIPerf applies it: prompt 4..1024 tokens, answer >= 4, both <= 2048. */
function fits(prompt: number, answer: number, skipAnswerCheck: boolean): boolean {
  return prompt >= 4 && prompt <= 1024 && (skipAnswerCheck || answer >= 4) &&
    prompt + answer <= 2048;
}

async function shareGpt(
  options: DatasetOptions & { outputLengthGiven: boolean },
): Promise<Conversation[]> {
  const { path } = options;
  const root = await readJsonFile(path);
  if (!Array.isArray(root)) {
    throw new InputError(`"${path}": a ShareGPT file is a JSON array of {"conversations": [...]}`);
  }
  const count = (text: string) =>
    options.tokenizer?.count(text) ?? text.split(/\s+/).filter((w) => w !== "").length;
  const conversations: Conversation[] = [];
  root.forEach((entry, i) => {
    const messages = isRecord(entry) ? entry.conversations : undefined;
    if (!Array.isArray(messages) || messages.length < 2) return;
    const [prompt, answer] = messages.map((m) => isRecord(m) ? m.value : undefined);
    if (typeof prompt !== "string" || typeof answer !== "string") return;
    const answerTokens = count(answer);
    if (!fits(count(prompt), answerTokens, options.outputLengthGiven)) return;
    conversations.push({
      sessionId: `conversation-${i}`,
      turns: [{ texts: [prompt], maxTokens: answerTokens, where: `"${path}" [${i}]` }],
    });
  });
  if (conversations.length === 0) {
    throw new InputError(
      `"${path}": no ShareGPT entry has a prompt of 4 to 1024 tokens and an answer of at least 4`,
    );
  }
  return conversations;
}

/**
 * The conversations of a dataset file; throws an InputError naming the line
 * and field it can not use.
 */
export function loadDataset(
  options: DatasetOptions & { outputLengthGiven: boolean },
): Promise<Conversation[]> {
  // The production traces' and replayed payloads' readers load with their file types.
  switch (options.type) {
    case "single_turn":
      return singleTurn(options.path);
    case "multi_turn":
      return multiTurn(options.path);
    case "random_pool":
      return randomPool(options);
    case "mooncake_trace":
      return mooncakeTrace(options);
    case "burstgpt_trace":
      return import("./traces.ts").then((traces) => traces.burstGpt(options));
    case "azure_trace":
      return import("./traces.ts").then((traces) => traces.azureTrace(options));
    case "raw_payload":
      return import("./traces.ts").then((traces) => traces.rawPayloads(options.path));
    case "aiperf_inputs":
      return import("./traces.ts").then((traces) => traces.aiperfInputs(options.path));
    case "sharegpt":
      return shareGpt(options);
  }
}
