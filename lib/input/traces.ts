/**
 * Production traces and replayed payloads as conversations
 * (--custom-dataset-type): BurstGPT's CSV (`Timestamp` in seconds, `Request
 * tokens`, `Response tokens`), the Azure LLM inference traces' CSV
 * (`TIMESTAMP` as a date and time, `ContextTokens`, `GeneratedTokens`), each
 * row a request whose prompt has the row's input tokens under the run's
 * tokenizer and whose max_tokens is its output tokens, due at its time from
 * the first row's; and AIPerf's raw payloads (a JSONL body per line, sent as
 * written) and inputs.json (`{"data": [{"session_id", "payloads": [...]}]}`,
 * each session's payloads its turns). The replay controls
 * (--replay-speedup, --replay-max-gap, --replay-ignore-timestamps) apply to
 * every timed file.
 */
import { readDataFile, readJsonFile } from "./data_set.ts";
import type { Conversation, TurnSpec } from "./conversation.ts";
import { InputError } from "./errors.ts";
import type { Rng } from "./generate.ts";
import type { PromptMaker } from "./prompts.ts";

/** How a trace's timestamps are replayed. */
export interface ReplayOptions {
  /** Time runs this many times faster (AIPerf's --fixed-schedule-speedup); 1 as recorded. */
  speedup: number;
  /** No gap between consecutive requests is longer than this (ms, after the speedup). */
  maxGapMs?: number;
  /** Timestamps dropped: the load mode given paces the requests. */
  ignoreTimestamps: boolean;
}

/** The rows of a CSV file with a header line: one record per row, by column name. */
async function csvRows(
  path: string,
  columns: readonly string[],
): Promise<Array<{ row: Record<string, string>; where: string }>> {
  const lines = new TextDecoder().decode(await readDataFile(path)).split(/\r?\n/);
  const header = splitCsv(lines[0] ?? "").map((h) => h.trim());
  const missing = columns.filter((c) => !header.includes(c));
  if (missing.length > 0) {
    throw new InputError(
      `"${path}" line 1: no column ${missing.map((c) => `"${c}"`).join(", ")} ` +
        `(the header names ${header.map((h) => `"${h}"`).join(", ") || "nothing"})`,
    );
  }
  const rows: Array<{ row: Record<string, string>; where: string }> = [];
  lines.slice(1).forEach((line, i) => {
    if (line.trim() === "") return;
    const cells = splitCsv(line);
    rows.push({
      row: Object.fromEntries(header.map((h, k) => [h, (cells[k] ?? "").trim()])),
      where: `"${path}" line ${i + 2}`,
    });
  });
  if (rows.length === 0) throw new InputError(`"${path}" holds no row`);
  return rows;
}

/** A CSV line's cells; a quoted cell may hold commas and doubled quotes. */
export function splitCsv(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      cells.push(cell);
      cell = "";
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

function count(text: string, options: { column: string; where: string }): number {
  const n = Number(text);
  if (text === "" || !Number.isInteger(n) || n < 0) {
    throw new InputError(
      `${options.where}: "${options.column}" must be an integer >= 0, got "${text}"`,
    );
  }
  return n;
}

/** A trace row as a request: `input` tokens of prompt, `output` as max_tokens, due at `ms`. */
interface TraceRow {
  ms: number;
  input: number;
  output: number;
  where: string;
}

/**
 * Conversations of one request each, in time order, the first due at 0; a
 * row without input or output tokens (a failed request of the trace) is left
 * out.
 */
function traceConversations(
  rows: TraceRow[],
  options: { maker: PromptMaker; rng: Rng; path: string },
): Conversation[] {
  const kept = rows.filter((r) => r.input > 0 && r.output > 0);
  if (kept.length === 0) {
    throw new InputError(`"${options.path}": no row has both input and output tokens`);
  }
  // Stable: rows due at the same time keep their file order.
  kept.sort((a, b) => a.ms - b.ms);
  const zero = kept[0].ms;
  return kept.map((r, i) => ({
    sessionId: `conversation-${i}`,
    turns: [{
      texts: [options.maker.make(r.input, options.rng)],
      timestampMs: r.ms - zero,
      maxTokens: r.output,
      where: `${r.where} (${r.input} tokens in, ${r.output} out)`,
    }],
  }));
}

/** BurstGPT: `Timestamp` (s from the trace's start), `Request tokens`, `Response tokens`. */
export async function burstGpt(
  options: { path: string; maker: PromptMaker; rng: Rng },
): Promise<Conversation[]> {
  const rows = await csvRows(options.path, ["Timestamp", "Request tokens", "Response tokens"]);
  return traceConversations(
    rows.map(({ row, where }) => {
      const seconds = Number(row.Timestamp);
      if (row.Timestamp === "" || !Number.isFinite(seconds) || seconds < 0) {
        throw new InputError(`${where}: "Timestamp" must be seconds >= 0, got "${row.Timestamp}"`);
      }
      return {
        ms: seconds * 1000,
        input: count(row["Request tokens"], { column: "Request tokens", where }),
        output: count(row["Response tokens"], { column: "Response tokens", where }),
        where,
      };
    }),
    options,
  );
}

const AZURE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;

/** Azure's TIMESTAMP, "2023-11-16 18:15:46.6805900" (UTC, up to 100 ns), as ms since the epoch. */
function azureTime(text: string, where: string): number {
  const m = AZURE_TIME.exec(text);
  if (m === null) {
    throw new InputError(
      `${where}: "TIMESTAMP" must be a date and time such as 2023-11-16 18:15:46.6805900, ` +
        `got "${text}"`,
    );
  }
  const [, y, mo, d, h, mi, s, fraction = ""] = m;
  const whole = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  return whole + (fraction === "" ? 0 : Number(`0.${fraction}`) * 1000);
}

/** The Azure LLM inference traces (code, conv): `TIMESTAMP`, `ContextTokens`, `GeneratedTokens`. */
export async function azureTrace(
  options: { path: string; maker: PromptMaker; rng: Rng },
): Promise<Conversation[]> {
  const rows = await csvRows(options.path, ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]);
  return traceConversations(
    rows.map(({ row, where }) => ({
      ms: azureTime(row.TIMESTAMP, where),
      input: count(row.ContextTokens, { column: "ContextTokens", where }),
      output: count(row.GeneratedTokens, { column: "GeneratedTokens", where }),
      where,
    })),
    options,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A turn sent as written: the body replaces the one the endpoint would make. */
function payloadTurn(body: unknown, where: string): TurnSpec {
  if (!isRecord(body)) throw new InputError(`${where}: expected a JSON object (a request body)`);
  return { texts: [], body, where };
}

/** AIPerf's raw_payload: each line of the file a request body, sent verbatim. */
export async function rawPayloads(path: string): Promise<Conversation[]> {
  const lines = new TextDecoder().decode(await readDataFile(path)).split(/\r?\n/);
  const conversations: Conversation[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `"${path}" line ${i + 1}`;
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch (error) {
      throw new InputError(`${where}: invalid JSON: ${(error as Error).message}`);
    }
    conversations.push({
      sessionId: `conversation-${conversations.length}`,
      turns: [payloadTurn(body, where)],
    });
  });
  if (conversations.length === 0) throw new InputError(`"${path}" holds no payload`);
  return conversations;
}

/** AIPerf's inputs.json: `{"data": [{"session_id", "payloads": [body, ...]}]}`, as it writes it. */
export async function aiperfInputs(path: string): Promise<Conversation[]> {
  const root = await readJsonFile(path);
  const data = isRecord(root) ? root.data : undefined;
  if (!Array.isArray(data) || data.length === 0) {
    throw new InputError(`"${path}": expected {"data": [{"session_id": ..., "payloads": [...]}]}`);
  }
  return data.map((session, i) => {
    const where = `"${path}" data[${i}]`;
    const payloads = isRecord(session) ? session.payloads : undefined;
    if (!Array.isArray(payloads) || payloads.length === 0) {
      throw new InputError(`${where}: expected {"session_id": ..., "payloads": [{...}, ...]}`);
    }
    const id = (session as Record<string, unknown>).session_id;
    return {
      sessionId: typeof id === "string" && id !== "" ? id : `conversation-${i}`,
      turns: payloads.map((body, t) => payloadTurn(body, `${where} payloads[${t}]`)),
    };
  });
}

/**
 * The replay controls over conversations in time order: timestamps divided
 * by the speedup, gaps capped, or dropped.
 */
export function replayed(conversations: Conversation[], options: ReplayOptions): Conversation[] {
  const turns = conversations.flatMap((c) => c.turns).filter((t) => t.timestampMs !== undefined);
  if (options.ignoreTimestamps) {
    for (const turn of turns) delete turn.timestampMs;
    return conversations;
  }
  let previous: number | undefined;
  let shifted = 0;
  for (const turn of turns) {
    const at = turn.timestampMs! / options.speedup;
    const gap = previous === undefined ? at : at - previous;
    previous = at;
    shifted += options.maxGapMs === undefined ? gap : Math.min(gap, options.maxGapMs);
    // Microseconds are plenty: the schedule's timers are milliseconds.
    turn.timestampMs = Math.round(shifted * 1000) / 1000;
  }
  return conversations;
}
