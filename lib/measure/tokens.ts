/**
 * LLM metrics of token-streaming requests, defined as genai-perf
 * (genai_perf/profile_data_parser/llm_profile_data_parser.py) and AIPerf
 * (aiperf/metrics/types/) define them: time to first token (send to first
 * output), time to second token (first output to second), inter-token latency
 * ((request latency - TTFT) / (output tokens - 1)), request latency (send to
 * last output), sequence lengths (the prompt's own tokens), token throughput,
 * per-user throughput (1 / ITL of each request), prefill throughput
 * (ISL / TTFT), inter-chunk latency (every gap), reasoning tokens and goodput;
 * statistics as numpy takes them. Computed when a level ends from the
 * windows' raw figures, so that a tokenizer can count response texts off the
 * request loop.
 */
import type { Tokenizer } from "../input/tokenizer.ts";
import { interpolatedPercentile, mean, populationStdDev } from "./stats.ts";
import { compareCounts, type CountFigures } from "./usage_check.ts";
import type {
  Distribution,
  GoodputObjective,
  LlmSummary,
  Samples,
  TokenSources,
  TokenWindowData,
  WindowData,
} from "../types/results.ts";

/** genai-perf's percentiles (p1 to p99); --percentile adds its own. */
export const LLM_PERCENTILES: readonly number[] = [1, 5, 10, 25, 50, 75, 90, 95, 99];

/** Points of the TTFT-vs-input-length scatter kept per level. */
const SCATTER_POINTS = 2000;

/**
 * avg, std, min, max and percentiles of `values`, ignoring NaN, as
 * genai-perf's Statistics and AIPerf's MetricArray take them (numpy: linear
 * percentiles, population standard deviation); undefined when none remain.
 */
export function distribution(
  values: readonly Samples[],
  percentiles: readonly number[],
): Distribution | undefined {
  let count = 0;
  for (const list of values) for (const v of list) if (!Number.isNaN(v)) count++;
  if (count === 0) return undefined;
  const sorted = new Float64Array(count);
  let i = 0;
  for (const list of values) for (const v of list) if (!Number.isNaN(v)) sorted[i++] = v;
  sorted.sort();
  const avg = mean(sorted);
  return {
    avg,
    std: populationStdDev(sorted, avg),
    min: sorted[0],
    max: sorted[count - 1],
    percentiles: new Map(percentiles.map((p) => [p, interpolatedPercentile(sorted, p)])),
  };
}

export interface TokenSummaryOptions {
  /** --percentile, added to LLM_PERCENTILES. */
  percentiles?: readonly number[];
  /** Counts output texts the server gave no usage for. */
  tokenizer?: Tokenizer;
  goodput?: readonly GoodputObjective[];
  /** --slice-duration in ms: the metrics of each slice of the level too (0 or absent: none). */
  sliceMs?: number;
}

/** Per-request figures of a level, aligned by index. */
interface Requests {
  ttftUs: Float64Array;
  ttstUs: Float64Array;
  latencyUs: Float64Array;
  itlUs: Float64Array;
  outputTokens: Float64Array;
  inputTokens: Float64Array;
  serverInputTokens: Float64Array;
  reasoningTokens: Float64Array;
  perUser: Float64Array;
  prefill: Float64Array;
  sendLagUs: Float64Array;
  outputSources: TokenSources;
  inputSources: TokenSources;
  /** Requests whose answer carried reasoning. */
  reasoning: number;
  /** What usage_check.ts compares: the client's and the server's counts, NaN where unknown. */
  counts: CountFigures;
}

/**
 * Answer texts the tokenizer counted, by tokenizer: a level's texts are
 * summarized more than once (the level, each of its windows, its slices,
 * turns and models), and each is counted once. Bounded: the strings it
 * holds are the windows' own, kept only while it is smaller than this.
 */
const COUNTED = new WeakMap<Tokenizer, Map<string, number>>();
const MAX_COUNTED = 5000;

function countText(tokenizer: Tokenizer, text: string): number {
  let counts = COUNTED.get(tokenizer);
  if (counts === undefined) COUNTED.set(tokenizer, counts = new Map());
  let n = counts.get(text);
  if (n === undefined) {
    n = tokenizer.count(text);
    if (counts.size >= MAX_COUNTED) counts.clear();
    counts.set(text, n);
  }
  return n;
}

/** A request's reasoning tokens: the usage's, else the tokenizer's count, else its chunks. */
function reasoningOf(t: TokenWindowData, j: number, tokenizer: Tokenizer | undefined): number {
  if (t.reasoningUsage[j] >= 0) return t.reasoningUsage[j];
  const text = t.reasoningTexts[j];
  if (tokenizer !== undefined && text !== undefined) return countText(tokenizer, text);
  return t.reasoningChunks[j];
}

function perRequest(
  tokens: readonly TokenWindowData[],
  tokenizer: Tokenizer | undefined,
): Requests {
  let n = 0;
  for (const t of tokens) n += t.latencyUs.length;
  const r: Requests = {
    ttftUs: new Float64Array(n),
    ttstUs: new Float64Array(n),
    latencyUs: new Float64Array(n),
    itlUs: new Float64Array(n),
    outputTokens: new Float64Array(n),
    inputTokens: new Float64Array(n),
    serverInputTokens: new Float64Array(n),
    reasoningTokens: new Float64Array(n),
    perUser: new Float64Array(n),
    prefill: new Float64Array(n),
    sendLagUs: new Float64Array(n),
    outputSources: { usage: 0, tokenizer: 0, none: 0 },
    inputSources: { usage: 0, tokenizer: 0, none: 0 },
    reasoning: 0,
    counts: {
      clientInput: new Float64Array(n),
      serverInput: new Float64Array(n),
      clientOutput: new Float64Array(n),
      usageOutput: new Float64Array(n),
      clientReasoning: new Float64Array(n),
      usageReasoning: new Float64Array(n),
      output: new Float64Array(n),
      requested: new Float64Array(n),
      cached: new Float64Array(n),
    },
  };
  const c = r.counts;
  let i = 0;
  for (const t of tokens) {
    for (let j = 0; j < t.latencyUs.length; j++, i++) {
      const text = t.texts[j];
      const usage = t.usageTokens[j];
      // The tokenizer's count of the answer: the output length without usage, beside it with a
      // model's own tokenizer.
      const counts = tokenizer !== undefined && text !== undefined &&
        (usage < 0 || tokenizer.fromModel === true);
      const counted = counts ? countText(tokenizer, text) : NaN;
      c.clientOutput[i] = usage >= 0 ? counted : NaN;
      c.usageOutput[i] = usage >= 0 ? usage : NaN;
      let output: number;
      if (usage >= 0) {
        output = usage;
        r.outputSources.usage++;
      } else if (!Number.isNaN(counted)) {
        output = counted;
        r.outputSources.tokenizer++;
      } else {
        output = t.chunks[j];
        r.outputSources.none++;
      }
      // ISL is the prompt's own count; the server's (chat template included) only without one.
      const server = t.serverInputTokens[j];
      let input = t.inputTokens[j];
      if (input >= 0) r.inputSources.tokenizer++;
      else if (server >= 0) {
        input = server;
        r.inputSources.usage++;
      } else r.inputSources.none++;
      const ttft = t.ttftUs[j];
      const latency = t.latencyUs[j];
      r.ttftUs[i] = ttft;
      r.ttstUs[i] = t.ttstUs[j];
      r.latencyUs[i] = latency;
      // genai-perf asks for two chunks as well as two tokens (an answer in one piece has no gap).
      const itl = output > 1 && t.chunks[j] > 1 ? (latency - ttft) / (output - 1) : NaN;
      r.itlUs[i] = itl;
      r.perUser[i] = itl > 0 ? 1e6 / itl : NaN;
      r.outputTokens[i] = output;
      r.inputTokens[i] = input < 0 ? NaN : input;
      r.serverInputTokens[i] = server < 0 ? NaN : server;
      const own = t.inputTokens[j];
      c.clientInput[i] = own < 0 ? NaN : own;
      c.serverInput[i] = r.serverInputTokens[i];
      c.output[i] = output;
      c.requested[i] = t.requestedTokens[j] < 0 ? NaN : t.requestedTokens[j];
      c.cached[i] = t.cachedTokens[j] < 0 ? NaN : t.cachedTokens[j];
      r.prefill[i] = input < 0 || !(ttft > 0) ? NaN : input / (ttft / 1e6);
      const reasoning = t.reasoningChunks[j] > 0 || t.reasoningUsage[j] > 0
        ? reasoningOf(t, j, tokenizer)
        : NaN;
      r.reasoningTokens[i] = reasoning;
      const reasoningText = t.reasoningTexts[j];
      const usageReasoning = t.reasoningUsage[j];
      c.usageReasoning[i] = usageReasoning >= 0 ? usageReasoning : NaN;
      c.clientReasoning[i] = usageReasoning >= 0 && tokenizer?.fromModel === true &&
          reasoningText !== undefined
        ? countText(tokenizer, reasoningText)
        : NaN;
      if (!Number.isNaN(reasoning)) r.reasoning++;
      r.sendLagUs[i] = t.sendLagUs[j];
    }
  }
  return r;
}

const OBJECTIVE_VALUES: Record<GoodputObjective["metric"], (r: Requests, i: number) => number> = {
  time_to_first_token: (r, i) => r.ttftUs[i] / 1000,
  time_to_second_token: (r, i) => r.ttstUs[i] / 1000,
  inter_token_latency: (r, i) => r.itlUs[i] / 1000,
  request_latency: (r, i) => r.latencyUs[i] / 1000,
  output_token_throughput_per_user: (r, i) => r.perUser[i],
};

/**
 * Whether request `i` met every objective. A request without the figure (no
 * second token, one token so no inter-token latency) is not good: AIPerf's
 * GoodRequestCountMetric fails it, and genai-perf's LLMGoodputCalculator
 * counts only the requests that have every figure.
 */
function isGood(r: Requests, i: number, objectives: readonly GoodputObjective[]): boolean {
  for (const o of objectives) {
    const value = OBJECTIVE_VALUES[o.metric](r, i);
    if (Number.isNaN(value)) return false;
    const met = o.metric === "output_token_throughput_per_user"
      ? value >= o.value
      : value <= o.value;
    if (!met) return false;
  }
  return true;
}

function shifted(values: Float64Array, by: Float64Array): Float64Array {
  return values.map((v, i) => v + by[i]);
}

/** Every `step`-th (input tokens, TTFT) pair, so that the chart stays small. */
function scatter(r: Requests): Array<[number, number]> | undefined {
  const points: Array<[number, number]> = [];
  const step = Math.max(1, Math.ceil(r.ttftUs.length / SCATTER_POINTS));
  for (let i = 0; i < r.ttftUs.length; i += step) {
    if (!Number.isNaN(r.inputTokens[i]) && !Number.isNaN(r.ttftUs[i])) {
      points.push([r.inputTokens[i], r.ttftUs[i]]);
    }
  }
  return points.length > 0 ? points : undefined;
}

function gapsByPosition(tokens: readonly TokenWindowData[]): number[] | undefined {
  const sums: number[] = [];
  const counts: number[] = [];
  for (const t of tokens) {
    t.gapSumUs.forEach((sum, i) => {
      sums[i] = (sums[i] ?? 0) + sum;
      counts[i] = (counts[i] ?? 0) + t.gapCount[i];
    });
  }
  return sums.length > 0 ? sums.map((sum, i) => sum / counts[i]) : undefined;
}

/** The lists of TokenWindowData that do not hold one entry per request. */
const NOT_PER_REQUEST = new Set(["gapsUs", "gapSumUs", "gapCount"]);

/** The requests of `t` that `keep` picks (by index), gaps by position recounted. */
function subset(t: TokenWindowData, keep: (i: number) => boolean): TokenWindowData {
  const out = Object.fromEntries(Object.keys(t).map((k) => [k, []])) as unknown as TokenWindowData;
  const perRequest = Object.entries(t).filter(([key]) => !NOT_PER_REQUEST.has(key)) as Array<
    [keyof TokenWindowData, unknown[]]
  >;
  let gap = 0;
  for (let i = 0; i < t.latencyUs.length; i++) {
    const gaps = t.gapsPerRequest[i];
    if (keep(i)) {
      for (const [key, values] of perRequest) (out[key] as unknown[]).push(values[i]);
      for (let g = 0; g < gaps; g++) {
        const slot = Math.min(g, t.gapSumUs.length - 1);
        out.gapsUs.push(t.gapsUs[gap + g]);
        out.gapSumUs[slot] = (out.gapSumUs[slot] ?? 0) + t.gapsUs[gap + g];
        out.gapCount[slot] = (out.gapCount[slot] ?? 0) + 1;
      }
    }
    gap += gaps;
  }
  return out;
}

/**
 * Several models in one run (-m A,B): every metric over each model's
 * requests, in the order models first answered; rates over the level's
 * windows, as the level's own.
 */
function modelSummaries(
  windows: readonly WindowData[],
  tokens: readonly TokenWindowData[],
  options: TokenSummaryOptions,
): NonNullable<LlmSummary["models"]> {
  const names = new Set(tokens.flatMap((t) => t.models ?? []));
  const out: NonNullable<LlmSummary["models"]> = [];
  for (const model of names) {
    const parts = windows.map((w): WindowData => {
      const t = w.tokens;
      if (t === undefined) return w;
      const own = subset(t, (i) => t.models?.[i] === model);
      delete own.models;
      return { ...w, tokens: own };
    });
    const llm = summarizeTokens(parts, { ...options, sliceMs: 0 });
    if (llm !== undefined) out.push({ model, llm });
  }
  return out;
}

/**
 * AIPerf's time slices (--slice-duration): the level cut into slices of
 * `sliceMs` from its first window's start, each request in the slice it was
 * sent in (one sent before the level began, in the first), every metric of
 * each slice over its own duration.
 */
function timeSlices(
  windows: readonly WindowData[],
  tokens: readonly TokenWindowData[],
  options: TokenSummaryOptions & { sliceMs: number },
): NonNullable<LlmSummary["slices"]> {
  const startMs = Number(windows[0].startWallNs) / 1e6;
  const last = windows[windows.length - 1];
  const endMs = Number(last.startWallNs) / 1e6 + (last.endMs - last.startMs);
  const count = Math.max(1, Math.ceil((endMs - startMs) / options.sliceMs));
  const slices: NonNullable<LlmSummary["slices"]> = [];
  for (let k = 0; k < count; k++) {
    const from = k * options.sliceMs;
    const to = Math.min((k + 1) * options.sliceMs, endMs - startMs);
    const index = (sendMs: number) =>
      Math.min(count - 1, Math.max(0, Math.floor((sendMs - startMs) / options.sliceMs)));
    // One window per part, the slice's duration counted once.
    const parts = tokens.map((t, j): WindowData => ({
      ...last,
      startMs: 0,
      endMs: j === 0 ? to - from : 0,
      tokens: subset(t, (i) => index(t.sendEpochMs[i]) === k),
    }));
    const llm = summarizeTokens(parts, { ...options, sliceMs: 0 });
    if (llm !== undefined) slices.push({ startS: from / 1000, endS: to / 1000, llm });
  }
  return slices;
}

/**
 * The LLM summary of each group of a window's requests (`keys[i]` names the
 * group of its i-th token request, in recorded order), in the order groups
 * first appear; each group's rates over its own span, from its first send to
 * its last answer, as genai-perf rates each session.
 */
export function groupSummaries(
  window: WindowData,
  keys: readonly string[],
  options: TokenSummaryOptions = {},
): Map<string, LlmSummary> {
  const groups = new Map<string, LlmSummary>();
  const t = window.tokens;
  if (t === undefined || t.latencyUs.length !== keys.length) return groups;
  for (const key of new Set(keys)) {
    const tokens = subset(t, (i) => keys[i] === key);
    let first = Infinity;
    let last = -Infinity;
    tokens.sendEpochMs.forEach((sent, i) => {
      first = Math.min(first, sent);
      last = Math.max(last, sent + tokens.latencyUs[i] / 1000);
    });
    const part: WindowData = { ...window, startMs: 0, endMs: last - first, tokens };
    const llm = summarizeTokens([part], { ...options, sliceMs: 0 });
    if (llm !== undefined) groups.set(key, llm);
  }
  return groups;
}

/**
 * The LLM summary of windows, or undefined when they hold no token-streaming
 * request. Rates divide by the windows' summed duration: the peers' benchmark
 * duration (first send to last answer) is that of the level's measurement; a
 * --request-count window runs exactly from the first send to the last answer.
 */
export function summarizeTokens(
  windows: readonly WindowData[],
  options: TokenSummaryOptions = {},
): LlmSummary | undefined {
  const tokens = windows.flatMap((w) =>
    w.tokens && w.tokens.latencyUs.length > 0 ? [w.tokens] : []
  );
  if (tokens.length === 0) return undefined;
  const wanted = [...new Set([...LLM_PERCENTILES, ...options.percentiles ?? []])].sort((a, b) =>
    a - b
  );
  const of = (values: Float64Array) => distribution([values], wanted);
  const r = perRequest(tokens, options.tokenizer);
  let seconds = 0;
  for (const w of windows) seconds += (w.endMs - w.startMs) / 1000;
  const rate = (count: number) => seconds > 0 ? count / seconds : 0;
  let outputTotal = 0;
  for (const n of r.outputTokens) outputTotal += n;
  const count = r.latencyUs.length;
  const summary: LlmSummary = {
    requestCount: count,
    requestThroughput: rate(count),
    requestLatencyUs: of(r.latencyUs)!,
    outputSequenceLength: of(r.outputTokens)!,
    outputTokenThroughput: rate(outputTotal),
    totalOutputTokens: outputTotal,
    outputTokenSources: r.outputSources,
    inputTokenSources: r.inputSources,
  };
  const optional = {
    timeToFirstTokenUs: of(r.ttftUs),
    timeToSecondTokenUs: of(r.ttstUs),
    interTokenLatencyUs: of(r.itlUs),
    interChunkLatencyUs: distribution(tokens.map((t) => t.gapsUs), wanted),
    gapByPositionUs: gapsByPosition(tokens),
    inputSequenceLength: of(r.inputTokens),
    serverInputSequenceLength: of(r.serverInputTokens),
    outputTokenThroughputPerUser: of(r.perUser),
    prefillThroughput: of(r.prefill),
    reasoningTokenCount: r.reasoning > 0 ? of(r.reasoningTokens) : undefined,
    ttftByInput: scatter(r),
  };
  for (const [key, value] of Object.entries({ ...optional, ...compareCounts(r.counts, of) })) {
    if (value !== undefined) Object.assign(summary, { [key]: value });
  }
  if (r.outputSources.tokenizer > 0 || r.inputSources.tokenizer > 0) {
    summary.tokenizer = options.tokenizer?.name ?? "tokenizer";
  }
  if (options.goodput !== undefined && options.goodput.length > 0) {
    let good = 0;
    for (let i = 0; i < count; i++) if (isGood(r, i, options.goodput)) good++;
    summary.goodput = {
      objectives: [...options.goodput],
      goodCount: good,
      requestGoodput: rate(good),
    };
  }
  if (r.sendLagUs.some((lag) => !Number.isNaN(lag))) {
    const corrected: NonNullable<LlmSummary["corrected"]> = {
      requestLatencyUs: of(shifted(r.latencyUs, r.sendLagUs))!,
    };
    const ttft = of(shifted(r.ttftUs, r.sendLagUs));
    if (ttft) corrected.timeToFirstTokenUs = ttft;
    summary.corrected = corrected;
  }
  if (options.sliceMs !== undefined && options.sliceMs > 0) {
    summary.slices = timeSlices(windows, tokens, { ...options, sliceMs: options.sliceMs });
  }
  if (tokens.some((t) => t.models !== undefined)) {
    summary.models = modelSummaries(windows, tokens, options);
  }
  return summary;
}

/** "usage", "tokenizer", "chunks" (output) / "unknown" (input), or the mix with counts. */
export function describeSources(sources: TokenSources, none: string, tokenizer?: string): string {
  const named: Array<[string, number]> = [
    ["usage", sources.usage],
    [tokenizer === undefined ? "tokenizer" : `tokenizer ${tokenizer}`, sources.tokenizer],
    [none, sources.none],
  ];
  const used = named.filter(([, n]) => n > 0);
  if (used.length === 1) return used[0][0];
  return `mixed (${used.map(([name, n]) => `${name} ${n}`).join(", ")})`;
}

/** The --goodput metric names and what each bounds. */
export const GOODPUT_METRICS: readonly GoodputObjective["metric"][] = [
  "time_to_first_token",
  "time_to_second_token",
  "inter_token_latency",
  "request_latency",
  "output_token_throughput_per_user",
];

/**
 * --goodput NAME:VALUE ... (milliseconds; tokens/s for the per-user
 * throughput). Throws a one-line message naming the faulty value.
 */
export function parseGoodput(values: readonly string[]): GoodputObjective[] {
  const objectives: GoodputObjective[] = [];
  for (const item of values.flatMap((v) => v.split(/[\s,]+/)).filter((v) => v !== "")) {
    const match = /^([a-z_]+)[:=](.+)$/.exec(item);
    const metric = match?.[1] as GoodputObjective["metric"] | undefined;
    const value = match ? Number(match[2]) : NaN;
    if (metric === undefined || !GOODPUT_METRICS.includes(metric)) {
      throw new Error(
        `Invalid value "${item}" for --goodput: expected NAME:VALUE with NAME one of ${
          GOODPUT_METRICS.join(", ")
        }`,
      );
    }
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`Invalid value "${item}" for --goodput: the value must be a number > 0`);
    }
    objectives.push({ metric, value });
  }
  return objectives;
}
