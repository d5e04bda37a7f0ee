/**
 * perf_analyzer's session concurrency mode (--session-concurrency N): N
 * multi-turn chat sessions in flight, each on its own connection. A session
 * sends its turns one after the other: each turn's "messages" are appended
 * to the session's history (every earlier turn's messages and the answers'
 * assistant messages) and the request carries the whole history; after the
 * answer, the turn's delay passes before the next turn goes. A lane that
 * finishes a session takes the next one not started, until none is left.
 */
import { payloadTensor } from "../input/llm_data.ts";
import type { SessionTurn } from "../input/sessions.ts";
import { decodeBytesElements } from "../input/codec.ts";
import type { Recorder } from "../measure/recorder.ts";
import { RESPONSE_OUTPUT } from "../protocol/openai.ts";
import type { InferenceClient, InferSession, OutputTensors } from "../protocol/types.ts";
import type { RequestTiming, TokenTiming } from "../types/timing.ts";

export interface SessionLoadOptions {
  sessions: readonly (readonly SessionTurn[])[];
  /** Sessions in flight at most. */
  concurrency: number;
  /** -m and -x: what the requests are prepared for. */
  target: { model: string; version: string };
  /** True once no further turn may start (Ctrl-C). */
  stopped: () => boolean;
}

const decoder = new TextDecoder();

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The assistant message of an answer: the first choice's `message`, or, for
 * a streamed answer, the content of its chunks' deltas joined. Undefined
 * when the answer holds none.
 */
export function replyOf(outputs: OutputTensors | undefined): Record<string, unknown> | undefined {
  const output = outputs?.find((t) => t.name === RESPONSE_OUTPUT);
  if (output === undefined) return undefined;
  let content: string | undefined;
  for (const element of decodeBytesElements(output.data)) {
    let body: unknown;
    try {
      body = JSON.parse(decoder.decode(element));
    } catch {
      continue;
    }
    const choice = isRecord(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
    if (!isRecord(choice)) continue;
    if (isRecord(choice.message)) return choice.message;
    const delta = choice.delta;
    if (isRecord(delta) && typeof delta.content === "string") {
      content = (content ?? "") + delta.content;
    }
  }
  return content === undefined ? undefined : { role: "assistant", content };
}

const NO_REPLY = "The answer holds no assistant message (choices[0].message or delta content): " +
  "its session can not go on";

/** Which session and turn a recorded request was. */
export interface TurnLabel {
  sessionId: string;
  turnIndex: number;
}

export class SessionLoad {
  readonly #client: InferenceClient;
  readonly #options: SessionLoadOptions;
  #next = 0;
  /** One per valid request, in the order they were recorded (per-turn and per-session metrics). */
  readonly labels: TurnLabel[] = [];

  constructor(client: InferenceClient, options: SessionLoadOptions) {
    this.#client = client;
    this.#options = options;
  }

  /** Runs every session, recording each request; resolves when all have finished. */
  async run(recorder: Recorder): Promise<void> {
    const lanes = Math.min(this.#options.concurrency, this.#options.sessions.length);
    await Promise.all(Array.from({ length: lanes }, () => this.#lane(recorder)));
  }

  async #lane(recorder: Recorder): Promise<void> {
    const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const lane: { session?: InferSession } = {};
    try {
      while (!this.#options.stopped() && this.#next < this.#options.sessions.length) {
        await this.#converse(this.#options.sessions[this.#next++], { recorder, timing, lane });
      }
    } finally {
      lane.session?.close();
    }
  }

  /** One session's turns in order; a turn that fails ends the session (its history is broken). */
  async #converse(
    turns: readonly SessionTurn[],
    context: { recorder: Recorder; timing: RequestTiming; lane: { session?: InferSession } },
  ): Promise<void> {
    const { recorder, timing, lane } = context;
    const history: unknown[] = [];
    // AIPerf's headers: for routers that keep a conversation on one replica (its KV cache), one
    // id per conversation sent, shared by its turns; and one per request.
    const correlation = crypto.randomUUID();
    for (const [turnIndex, turn] of turns.entries()) {
      if (this.#options.stopped()) return;
      history.push(...turn.body.messages);
      const request = this.#client.prepare({
        inputs: [payloadTensor({ ...turn.body, messages: history }), ...turn.metadata],
        outputs: [],
        headers: { "X-Correlation-ID": correlation, "X-Request-ID": crypto.randomUUID() },
      }, this.#options.target);
      let reply: Record<string, unknown> | undefined;
      const labelled = timing as Partial<TokenTiming>;
      labelled.sessionId = turn.sessionId;
      labelled.turnIndex = turnIndex;
      try {
        lane.session ??= await this.#client.openSession();
        reply = replyOf(await lane.session.infer(request, timing, { decodeOutputs: true }));
      } catch (error) {
        // A request that had a session was sent (or tried): its timing dates it in the export.
        recorder.recordError(
          error instanceof Error ? error.message : String(error),
          lane.session && timing,
        );
        lane.session?.close();
        delete lane.session;
        return;
      }
      if (reply === undefined) {
        recorder.recordError(NO_REPLY, timing);
        return;
      }
      recorder.record(timing);
      this.labels.push({ sessionId: turn.sessionId, turnIndex });
      history.push(reply);
      if (turn.delayMs !== undefined && turn !== turns[turns.length - 1]) {
        await new Promise((resolve) => setTimeout(resolve, turn.delayMs));
      }
    }
  }
}
