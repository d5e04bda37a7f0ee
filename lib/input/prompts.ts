/**
 * Made-up prompt text for LLM runs: prompts of an exact token count of the
 * run's tokenizer, a pool of shared prefixes (AIPerf's prefix prompts, for
 * prefix-cache studies), prompts built from Mooncake-style hash blocks (a
 * hash id is always the same block of text, so requests sharing hash ids
 * share a prefix), and AIPerf's ISL/OSL mixes (--sequence-distribution).
 */
import { InputError } from "./errors.ts";
import { type Rng, standardNormal } from "./generate.ts";
import type { Tokenizer } from "./tokenizer.ts";

const WORDS = (
  "time year people way day man thing woman life child world school state family student " +
  "group country problem hand part place case week company system program question work " +
  "government number night point home water room mother area money story fact month lot " +
  "right study book eye job word business issue side kind head house service friend father"
).split(" ");

/** A length from a normal distribution, rounded, at least 1. */
export function sampleLength(rng: Rng, mean: number, stddev: number): number {
  return Math.max(1, Math.round(mean + stddev * standardNormal(rng)));
}

/**
 * AIPerf's positive normal integer (turns per conversation, delays): a
 * normal sample redrawn until it is >= 0, rounded up.
 */
export function positiveNormalInteger(rng: Rng, mean: number, stddev: number): number {
  if (stddev <= 0) return Math.ceil(mean);
  for (;;) {
    const n = mean + stddev * standardNormal(rng);
    if (n >= 0) return Math.ceil(n);
  }
}

/**
 * Makes prompts of an exact token count: words that are one token each, with
 * or without a space before them, so N words are N tokens; a prompt the
 * tokenizer counts otherwise (merges across words) is trimmed or padded.
 * With `wrap` (a chat template rendered over the prompt as one user message)
 * the count is of the wrapped prompt: what the server counts.
 */
export class PromptMaker {
  readonly #words: string[];
  readonly #tokenizer: Tokenizer | undefined;
  readonly #wrap: ((text: string) => string) | undefined;
  /** Tokens the wrapping adds around one word (0 without). */
  readonly #overhead: number;
  /** Hash id -> its block's words (a block's first use makes it). */
  readonly #blocks = new Map<number, string[]>();

  constructor(tokenizer: Tokenizer | undefined, options: { wrap?: (text: string) => string } = {}) {
    this.#tokenizer = tokenizer;
    const single = tokenizer === undefined
      ? WORDS
      : WORDS.filter((w) => tokenizer.count(w) === 1 && tokenizer.count(`${w} ${w}`) === 2);
    this.#words = single.length > 0 ? single : WORDS;
    const wrap = tokenizer === undefined ? undefined : options.wrap;
    this.#wrap = wrap;
    this.#overhead = wrap === undefined
      ? 0
      : Math.max(0, tokenizer!.count(wrap(this.#words[0])) - 1);
  }

  #pick(count: number, rng: Rng): string[] {
    const words = this.#words;
    return Array.from({ length: count }, () => words[Math.floor(rng() * words.length)]);
  }

  /**
   * A prompt of `tokens` tokens (wrapped, unless `bare`: a shared prefix is
   * part of a prompt that is wrapped as a whole). A wrapped prompt shorter
   * than the template itself is one word.
   */
  make(tokens: number, rng: Rng, options: { bare?: boolean } = {}): string {
    const wrap = options.bare ? undefined : this.#wrap;
    const overhead = wrap === undefined ? 0 : this.#overhead;
    const prompt = this.#pick(Math.max(1, tokens - overhead), rng);
    const t = this.#tokenizer;
    if (t === undefined) return prompt.join(" ");
    const count = () => t.count(wrap === undefined ? prompt.join(" ") : wrap(prompt.join(" ")));
    let n = count();
    for (let guard = 0; n !== tokens && guard < 4 * tokens; guard++) {
      if (n > tokens && prompt.length > 1) prompt.pop();
      else if (n > tokens) break;
      else prompt.push(...this.#pick(1, rng));
      n = count();
    }
    return prompt.join(" ");
  }

  /**
   * A prompt of `tokens` tokens made of one block of `blockSize` per hash id
   * (the last one cut to what is left), as AIPerf builds Mooncake trace
   * prompts; a hash id gives the same text wherever it appears, so prompts
   * that start with the same hash ids start with the same text. Throws an
   * InputError when the length does not fit the hash ids.
   */
  fromBlocks(
    tokens: number,
    options: { hashIds: readonly number[]; blockSize: number; rng: Rng },
  ): string {
    const { hashIds, blockSize, rng } = options;
    const last = tokens - (hashIds.length - 1) * blockSize;
    if (last <= 0 || last > blockSize) {
      throw new InputError(
        `"input_length" ${tokens} does not fit ${hashIds.length} hash ids of ${blockSize}-token ` +
          `blocks (the last block would hold ${last}; it must hold 1 to ${blockSize})`,
      );
    }
    const words: string[] = [];
    hashIds.forEach((id, i) => {
      let block = this.#blocks.get(id);
      if (block === undefined) {
        block = this.#pick(blockSize, rng);
        this.#blocks.set(id, block);
      }
      words.push(...(i === hashIds.length - 1 ? block.slice(0, last) : block));
    });
    return words.join(" ");
  }
}

/** One ISL/OSL pair of a length mix, with its weight in percent. */
export interface LengthPair {
  isl: number;
  islStddev: number;
  osl: number;
  oslStddev: number;
  percent: number;
}

const NUMBER = String.raw`(\d+(?:\.\d+)?|\.\d+)`;
const PAIR = new RegExp(
  String.raw`^\(?\s*(\d+)(?:\|${NUMBER})?\s*,\s*(\d+)(?:\|${NUMBER})?\s*\)?\s*:\s*${NUMBER}$`,
);

function checkPairs(pairs: LengthPair[], text: string): LengthPair[] {
  if (pairs.length === 0) throw new InputError(`--sequence-distribution "${text}" holds no pair`);
  for (const p of pairs) {
    if (p.isl < 1 || p.osl < 1 || p.percent > 100) {
      throw new InputError(
        `--sequence-distribution "${text}": lengths must be >= 1 and weights 0 to 100 percent`,
      );
    }
  }
  const total = pairs.reduce((sum, p) => sum + p.percent, 0);
  if (Math.abs(total - 100) > 1e-6) {
    throw new InputError(
      `--sequence-distribution "${text}": the weights add up to ${total}, not 100 (percent)`,
    );
  }
  return pairs;
}

function parseJsonPairs(text: string): LengthPair[] {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw new InputError(`--sequence-distribution: invalid JSON: ${(error as Error).message}`);
  }
  const pairs = (root as { pairs?: unknown })?.pairs;
  if (!Array.isArray(pairs)) {
    throw new InputError('--sequence-distribution: JSON needs {"pairs": [{"isl", "osl", "prob"}]}');
  }
  return pairs.map((p, i) => {
    const n = (key: string, fallback?: number) => {
      const value = (p as Record<string, unknown>)?.[key] ?? fallback;
      if (typeof value !== "number") {
        throw new InputError(`--sequence-distribution: pairs[${i}] needs a number "${key}"`);
      }
      return value;
    };
    return {
      isl: Math.trunc(n("isl")),
      islStddev: n("isl_stddev", 0),
      osl: Math.trunc(n("osl")),
      oslStddev: n("osl_stddev", 0),
      percent: n("prob"),
    };
  });
}

/**
 * AIPerf's --sequence-distribution: "ISL[|SD],OSL[|SD]:PERCENT;..." (or
 * "[(ISL,OSL):PERCENT,...]", or JSON {"pairs": [{"isl", "isl_stddev", "osl",
 * "osl_stddev", "prob"}]}), weights in percent adding up to 100. Throws an
 * InputError naming the part it can not read.
 */
export function parseLengthMix(text: string): LengthPair[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return checkPairs(parseJsonPairs(trimmed), text);
  const bracket = trimmed.startsWith("[") && trimmed.endsWith("]");
  const parts = bracket
    ? trimmed.slice(1, -1).split(/(?<=\)\s*:\s*[\d.]+)\s*,/)
    : trimmed.split(";");
  const pairs = parts.map((s) => s.trim()).filter((s) => s !== "").map((part) => {
    const m = PAIR.exec(part);
    if (m === null) {
      throw new InputError(
        `--sequence-distribution: can not read "${part}": expected ISL[|STDDEV],OSL[|STDDEV]:PERCENT`,
      );
    }
    return {
      isl: Number(m[1]),
      islStddev: Number(m[2] ?? 0),
      osl: Number(m[3]),
      oslStddev: Number(m[4] ?? 0),
      percent: Number(m[5]),
    };
  });
  return checkPairs(pairs, text);
}

/** An (ISL, OSL) drawn from the mix: a pair by weight, then each length around its mean. */
export function sampleLengthMix(
  mix: readonly LengthPair[],
  rng: Rng,
): { isl: number; osl: number } {
  let u = rng() * 100;
  const pair = mix.find((p) => (u -= p.percent) < 0) ?? mix[mix.length - 1];
  return {
    isl: pair.islStddev > 0 ? sampleLength(rng, pair.isl, pair.islStddev) : pair.isl,
    osl: pair.oslStddev > 0 ? sampleLength(rng, pair.osl, pair.oslStddev) : pair.osl,
  };
}
