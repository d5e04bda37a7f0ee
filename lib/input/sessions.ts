/**
 * --session-concurrency: OpenAI input data as multi-turn chat sessions, the
 * way perf_analyzer's session concurrency mode reads what genai-perf writes.
 * Steps with the same "session_id" are the turns of one session, in file
 * order; every turn but a session's last gives the "delay" (ms) to wait
 * after its answer before the next turn goes. Sessions keep the order in
 * which their first turns appear.
 */
import { decodeBytesElements, encodeBytesElements } from "./codec.ts";
import type { DataSet, DataStep } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { PAYLOAD } from "./llm_data.ts";
import { parseDataJson } from "./_json_syntax.ts";
import type { Tensor } from "../types/tensor.ts";

export interface SessionTurn {
  /** The session's "session_id". */
  sessionId: string;
  /** The request body; its "messages" follow the session's history when it is sent. */
  body: Record<string, unknown> & { messages: unknown[] };
  /**
   * The inputs perf_analyzer records beside the payload: "session_id", and
   * "delay" when the step gives one.
   */
  metadata: Tensor[];
  /** The wait after this turn's answer; absent on a session's last turn. */
  delayMs?: number;
  /** Where the step comes from, for messages. */
  where: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function bodyOf(step: DataStep): SessionTurn["body"] {
  const payload = step.inputs.find((t) => t.name === PAYLOAD);
  const [bytes] = payload ? decodeBytesElements(payload.data) : [];
  const body = bytes && parseDataJson(new TextDecoder().decode(bytes));
  if (!isRecord(body) || !Array.isArray(body.messages)) {
    throw new InputError(
      `${step.where}: --session-concurrency sends chat requests: the body needs a "messages" array`,
    );
  }
  return body as SessionTurn["body"];
}

function metadataOf(sessionId: string, delayMs: number | undefined): Tensor[] {
  const id: Tensor = {
    name: "session_id",
    datatype: "BYTES",
    shape: [1],
    data: encodeBytesElements([sessionId]),
  };
  if (delayMs === undefined) return [id];
  const data = new Uint8Array(8);
  new DataView(data.buffer).setBigUint64(0, BigInt(delayMs), true);
  return [id, { name: "delay", datatype: "UINT64", shape: [1], data }];
}

/**
 * The sessions of `dataSet`, at least `concurrency` of them; throws an
 * InputError naming the step without a "session_id", or a turn other than a
 * session's last without a "delay".
 */
export function sessionsOf(dataSet: DataSet, concurrency: number): SessionTurn[][] {
  const sessions = new Map<string, SessionTurn[]>();
  for (const step of dataSet.streams.flat()) {
    const id = step.sessionId;
    if (id === undefined) {
      throw new InputError(
        `${step.where}: no "session_id": --session-concurrency groups the input-data steps ` +
          "into sessions by it, so every step needs one",
      );
    }
    const turns = sessions.get(id) ?? [];
    turns.push({
      sessionId: id,
      body: bodyOf(step),
      metadata: metadataOf(id, step.delayMs),
      where: step.where,
      ...(step.delayMs === undefined ? {} : { delayMs: step.delayMs }),
    });
    sessions.set(id, turns);
  }
  if (sessions.size < concurrency) {
    throw new InputError(
      `The input data holds ${sessions.size} sessions (distinct "session_id" values), fewer ` +
        `than --session-concurrency ${concurrency}: add sessions or lower the concurrency`,
    );
  }
  for (const turns of sessions.values()) {
    const early = turns.slice(0, -1).find((turn) => turn.delayMs === undefined);
    if (early !== undefined) {
      throw new InputError(
        `${early.where}: no "delay": every turn of a session but its last gives the ` +
          "milliseconds to wait after its answer",
      );
    }
  }
  return [...sessions.values()];
}
