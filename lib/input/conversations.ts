/**
 * The conversations of an LLM run without payload files, as AIPerf composes
 * them: from a dataset file (--input-file, read as --custom-dataset-type or
 * --public-dataset says), or made up: --conversation-num conversations of a
 * normal number of turns (--conversation-turn-mean/-stddev), each later turn
 * after a normal delay (--conversation-turn-delay-mean/-stddev, times
 * --conversation-turn-delay-ratio), prompts of a normal length or drawn from
 * a --sequence-distribution mix, the first turn of each starting with one
 * of the --prefix-prompt-pool-size shared prefixes.
 */
import { type Conversation, type DatasetType, loadDataset, type TurnSpec } from "./datasets.ts";
import { InputError } from "./errors.ts";
import type { Rng } from "./generate.ts";
import {
  type LengthPair,
  positiveNormalInteger,
  PromptMaker,
  sampleLength,
  sampleLengthMix,
} from "./prompts.ts";
import type { ChatTemplate, Tokenizer } from "./tokenizer.ts";
import type { ReplayOptions } from "./traces.ts";

/** AIPerf's default tokens per hash block of a Mooncake trace. */
export const DEFAULT_BLOCK_SIZE = 512;

/** What makes up the conversations (the part of SyntheticPrompts they read). */
export interface ConversationOptions {
  inputTokensMean: number;
  inputTokensStddev: number;
  outputTokens?: { mean: number; stddev: number };
  /** Conversations to make (or to draw from a random pool). */
  count: number;
  inputFile?: string;
  /** How --input-file reads; absent: single_turn (genai-perf's {"text"} lines are such). */
  datasetType?: DatasetType;
  /** Turns per made-up conversation; absent: one. */
  turns?: { mean: number; stddev: number };
  /** AIPerf's delay before each later turn, ms. */
  turnDelay?: { mean: number; stddev: number; ratio: number };
  /** Shared prefixes that the first turn of each made-up conversation starts with. */
  prefixPool?: { size: number; length: number };
  /** ISL/OSL pairs with weights, instead of the input and output means. */
  lengthMix?: readonly LengthPair[];
  /** Tokens per hash block of a Mooncake trace; default 512. */
  blockSize?: number;
  /**
   * AIPerf's fixed-schedule offsets for a timed file: records outside
   * [startMs, endMs] are left out, and the schedule starts at the first
   * timestamp (autoOffset), at startMs, or at 0.
   */
  traceWindow?: { autoOffset: boolean; startMs?: number; endMs?: number };
  /** --replay-speedup, --replay-max-gap, --replay-ignore-timestamps over a timed file. */
  replay?: ReplayOptions;
}

/** The conversations whose turns fall in the window, their timestamps from its start. */
function windowed(
  conversations: Conversation[],
  window: NonNullable<ConversationOptions["traceWindow"]>,
): Conversation[] {
  const { startMs = 0, endMs = Infinity } = window;
  const inside = (t: number | undefined) => t === undefined || (t >= startMs && t <= endMs);
  const kept = conversations
    .map((c) => ({ ...c, turns: c.turns.filter((turn) => inside(turn.timestampMs)) }))
    .filter((c) => c.turns.length > 0);
  const times = kept.flatMap((c) => c.turns.flatMap((t) => t.timestampMs ?? []));
  const zero = window.autoOffset ? Math.min(...times) : startMs;
  for (const turn of kept.flatMap((c) => c.turns)) {
    if (turn.timestampMs !== undefined) turn.timestampMs -= zero;
  }
  return kept;
}

function madeUp(
  options: ConversationOptions,
  context: { rng: Rng; maker: PromptMaker; unit: string },
) {
  const { rng, maker, unit } = context;
  const prefixes = Array.from(
    { length: options.prefixPool?.size ?? 0 },
    () => maker.make(options.prefixPool!.length, rng, { bare: true }),
  );
  const single = options.turns === undefined;
  return Array.from({ length: options.count }, (_, i): Conversation => {
    const count = single
      ? 1
      : positiveNormalInteger(rng, options.turns!.mean, options.turns!.stddev);
    const turns = Array.from({ length: count }, (_, t): TurnSpec => {
      const mix = options.lengthMix && sampleLengthMix(options.lengthMix, rng);
      const length = mix?.isl ??
        sampleLength(rng, options.inputTokensMean, options.inputTokensStddev);
      let text = maker.make(length, rng);
      if (t === 0 && prefixes.length > 0) {
        text = `${prefixes[Math.floor(rng() * prefixes.length)]} ${text}`;
      }
      const output = options.outputTokens;
      const maxTokens = mix?.osl ?? (output && sampleLength(rng, output.mean, output.stddev));
      const delay = options.turnDelay;
      return {
        texts: [text],
        where: single
          ? `synthetic prompt ${i} (${length} ${unit})`
          : `synthetic conversation ${i} turn ${t} (${length} ${unit})`,
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(t > 0 && delay
          ? {
            delayBeforeMs: Math.round(
              positiveNormalInteger(rng, delay.mean, delay.stddev) * delay.ratio,
            ),
          }
          : {}),
      };
    });
    return { sessionId: `conversation-${i}`, turns };
  });
}

/** The run's conversations; throws an InputError naming what it can not use. */
export async function makeConversations(
  options: ConversationOptions,
  context: { rng: Rng; tokenizer?: Tokenizer; chatTemplate?: ChatTemplate },
): Promise<Conversation[]> {
  const template = context.chatTemplate;
  const maker = new PromptMaker(
    context.tokenizer,
    template ? { wrap: (text) => template.render([{ role: "user", content: text }]) } : {},
  );
  if (options.inputFile === undefined) {
    const unit = context.tokenizer === undefined ? "words" : "tokens";
    return madeUp(options, { rng: context.rng, maker, unit });
  }
  let conversations = await loadDataset({
    type: options.datasetType ?? "single_turn",
    path: options.inputFile,
    count: options.count,
    rng: context.rng,
    maker,
    blockSize: options.blockSize ?? DEFAULT_BLOCK_SIZE,
    outputLengthGiven: options.outputTokens !== undefined,
    ...(context.tokenizer ? { tokenizer: context.tokenizer } : {}),
  });
  if (options.traceWindow) conversations = windowed(conversations, options.traceWindow);
  if (conversations.length === 0) {
    throw new InputError(`"${options.inputFile}": no record within the --fixed-schedule-* offsets`);
  }
  if (options.replay) {
    conversations = (await import("./traces.ts")).replayed(conversations, options.replay);
  }
  const output = options.outputTokens;
  if (output === undefined) return conversations;
  // --output-tokens-mean overrides the file's lengths, as in AIPerf.
  for (const turn of conversations.flatMap((c) => c.turns)) {
    turn.maxTokens = sampleLength(context.rng, output.mean, output.stddev);
  }
  return conversations;
}
