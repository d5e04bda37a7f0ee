/**
 * AIPerf's workload options (--service-kind openai): dataset files,
 * synthetic conversations, the shared-prefix pool and length mixes, read
 * into the conversation part of the synthetic prompts plan.
 */
import type { ConversationOptions } from "../input/conversations.ts";
import type { DatasetType } from "../input/datasets.ts";
import { InputError } from "../input/errors.ts";
import { parseLengthMix } from "../input/prompts.ts";
import type { RawOptions } from "./options.ts";
import type { Reader } from "./_reader.ts";

/** The options read here; they apply to --service-kind openai only. */
export const WORKLOAD_OPTIONS = [
  "custom-dataset-type",
  "public-dataset",
  "conversation-num",
  "conversation-turn-mean",
  "conversation-turn-stddev",
  "conversation-turn-delay-mean",
  "conversation-turn-delay-stddev",
  "conversation-turn-delay-ratio",
  "prefix-prompt-pool-size",
  "prefix-prompt-length",
  "sequence-distribution",
  "synthetic-input-tokens-block-size",
  "fixed-schedule-auto-offset",
  "fixed-schedule-start-offset",
  "fixed-schedule-end-offset",
  "replay-speedup",
  "replay-max-gap",
  "replay-ignore-timestamps",
];

type Workload = Omit<
  ConversationOptions,
  "inputTokensMean" | "inputTokensStddev" | "outputTokens" | "count" | "inputFile"
>;

function parseDatasetType(r: Reader, raw: RawOptions): DatasetType | undefined {
  const custom = r.string("custom-dataset-type") as DatasetType | undefined;
  const pub = r.string("public-dataset") as DatasetType | undefined;
  if (custom !== undefined && pub !== undefined) {
    r.errors.push(
      "Options --custom-dataset-type and --public-dataset exclude each other: give one",
    );
  }
  const type = custom ?? pub;
  if (type !== undefined && !raw.has("input-file")) {
    const [option, what] = custom !== undefined
      ? ["--custom-dataset-type", "the dataset file"]
      : ["--public-dataset", "a local copy of the dataset: nothing is downloaded"];
    r.errors.push(`Option ${option} needs --input-file (${what})`);
  }
  return type;
}

function parseConversations(r: Reader, raw: RawOptions): Pick<Workload, "turns" | "turnDelay"> {
  const turnOptions = ["conversation-turn-mean", "conversation-turn-stddev"];
  const delayOptions = [
    "conversation-turn-delay-mean",
    "conversation-turn-delay-stddev",
    "conversation-turn-delay-ratio",
  ];
  const given = [...turnOptions, ...delayOptions].filter((name) => raw.has(name));
  if (given.length === 0) return {};
  if (raw.has("input-file")) {
    r.errors.push(
      `Options ${given.map((n) => `--${n}`).join(", ")} make synthetic conversations: ` +
        "not with --input-file, whose conversations are its own",
    );
  }
  const turns = {
    mean: raw.has("conversation-turn-mean")
      ? r.bounded("conversation-turn-mean", (n) => n >= 1, "an integer >= 1")
      : 1,
    stddev: r.bounded("conversation-turn-stddev", (n) => n >= 0, "an integer >= 0"),
  };
  const turnDelay = {
    mean: r.bounded("conversation-turn-delay-mean", (n) => n >= 0, "a number >= 0"),
    stddev: r.bounded("conversation-turn-delay-stddev", (n) => n >= 0, "a number >= 0"),
    ratio: r.bounded("conversation-turn-delay-ratio", (n) => n >= 0, "a number >= 0"),
  };
  return { turns, turnDelay };
}

/** AIPerf's fixed-schedule offsets: which part of a timed file replays, from when. */
function parseTraceWindow(r: Reader, raw: RawOptions): Workload["traceWindow"] {
  const autoOffset = r.flag("fixed-schedule-auto-offset");
  const offset = (name: string) =>
    raw.has(name) ? r.bounded(name, (n) => n >= 0, "an integer >= 0") : undefined;
  const startMs = offset("fixed-schedule-start-offset");
  const endMs = offset("fixed-schedule-end-offset");
  if (!autoOffset && startMs === undefined && endMs === undefined) return undefined;
  if (!raw.has("input-file")) {
    r.errors.push("The --fixed-schedule-* offsets apply to a timed --input-file");
  }
  if (autoOffset && startMs !== undefined) {
    r.errors.push(
      "Options --fixed-schedule-auto-offset and --fixed-schedule-start-offset exclude each other",
    );
  }
  if (startMs !== undefined && endMs !== undefined && startMs > endMs) {
    r.errors.push(
      `--fixed-schedule-start-offset ${startMs} is after --fixed-schedule-end-offset ${endMs}`,
    );
  }
  return {
    autoOffset,
    ...(startMs === undefined ? {} : { startMs }),
    ...(endMs === undefined ? {} : { endMs }),
  };
}

/** --replay-speedup, --replay-max-gap, --replay-ignore-timestamps over a timed --input-file. */
function parseReplay(r: Reader, raw: RawOptions): Workload["replay"] {
  const given = ["replay-speedup", "replay-max-gap", "replay-ignore-timestamps"]
    .filter((name) => raw.has(name));
  if (given.length === 0) return undefined;
  if (!raw.has("input-file")) {
    r.errors.push(
      `Options ${given.map((n) => `--${n}`).join(", ")} apply to a timed --input-file (a trace)`,
    );
  }
  const ignoreTimestamps = r.flag("replay-ignore-timestamps");
  if (ignoreTimestamps && r.flag("fixed-schedule")) {
    r.errors.push(
      "Options --replay-ignore-timestamps and --fixed-schedule exclude each other: one drops " +
        "the timestamps the other sends at",
    );
  }
  const maxGap = raw.has("replay-max-gap")
    ? r.bounded("replay-max-gap", (n) => n >= 0, "a number of ms >= 0")
    : undefined;
  return {
    speedup: r.bounded("replay-speedup", (n) => n > 0, "a number > 0"),
    ...(maxGap === undefined ? {} : { maxGapMs: maxGap }),
    ignoreTimestamps,
  };
}

/**
 * The workload options given; problems go to the reader's errors. A file's
 * own conversations and the made-up ones' shape exclude each other.
 */
export function parseWorkload(r: Reader, raw: RawOptions): Workload {
  const datasetType = parseDatasetType(r, raw);
  const workload: Workload = { ...parseConversations(r, raw) };
  if (datasetType !== undefined) workload.datasetType = datasetType;
  if (raw.has("conversation-num") && raw.has("num-prompts")) {
    r.errors.push("Options --conversation-num and --num-prompts are one count: give one");
  }
  const poolSize = r.bounded("prefix-prompt-pool-size", (n) => n >= 0, "an integer >= 0");
  const prefixLength = r.bounded("prefix-prompt-length", (n) => n >= 0, "an integer >= 0");
  if (poolSize > 0 && prefixLength > 0) {
    workload.prefixPool = { size: poolSize, length: prefixLength };
  } else if (poolSize > 0 || prefixLength > 0) {
    r.errors.push(
      "Options --prefix-prompt-pool-size and --prefix-prompt-length go together (both > 0)",
    );
  }
  const mix = r.string("sequence-distribution");
  if (mix !== undefined) {
    try {
      workload.lengthMix = parseLengthMix(mix);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      r.errors.push(error.message);
    }
  }
  const fileOnly = ["prefix-prompt-pool-size", "sequence-distribution"].filter((n) => raw.has(n));
  if (fileOnly.length > 0 && raw.has("input-file")) {
    r.errors.push(
      `Options ${
        fileOnly.map((n) => `--${n}`).join(", ")
      } shape synthetic prompts: not with --input-file`,
    );
  }
  const window = parseTraceWindow(r, raw);
  if (window !== undefined) workload.traceWindow = window;
  const replay = parseReplay(r, raw);
  if (replay !== undefined) workload.replay = replay;
  if (raw.has("synthetic-input-tokens-block-size")) {
    workload.blockSize = r.bounded(
      "synthetic-input-tokens-block-size",
      (n) => n >= 1,
      "an integer >= 1",
    );
  }
  return workload;
}
