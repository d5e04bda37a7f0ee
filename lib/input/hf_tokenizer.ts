/**
 * A model's own tokenizer and chat template from a Hugging Face model
 * directory (--tokenizer DIR, as `huggingface-cli download` leaves it):
 * tokenizer.json (BPE, WordPiece or Unigram with its normalizer,
 * pre-tokenizer and added tokens) read by @huggingface/tokenizers, and the
 * Jinja chat template of tokenizer_config.json (or chat_template.jinja, or
 * chat_template.json) rendered by @huggingface/jinja, the engine
 * transformers.js renders them with. Both libraries are bundled; the files
 * are the user's, read once before the run.
 */
import { InputError } from "./errors.ts";
import type { ChatTemplate, Tokenizer } from "./_tokenizer_api.ts";

type Json = Record<string, unknown>;

const NEEDS = "a model directory holds tokenizer.json and tokenizer_config.json, " +
  "as huggingface-cli download leaves them";

const trimDir = (dir: string) => dir.replace(/\/+$/, "") || "/";

async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new InputError(`--tokenizer: can not read "${path}": ${(error as Error).message}`);
  }
}

async function readJson(path: string, required: string): Promise<Json | undefined> {
  const text = await readText(path);
  if (text === undefined) {
    if (required === "") return undefined;
    throw new InputError(`--tokenizer: no "${path}" (${required})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`--tokenizer: "${path}" is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InputError(`--tokenizer: "${path}" must hold a JSON object`);
  }
  return value as Json;
}

/** A special token of tokenizer_config.json: a string or an AddedToken object's content. */
function tokenText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    const content = (value as { content?: unknown }).content;
    if (typeof content === "string") return content;
  }
  return undefined;
}

/** The special tokens transformers hands every chat template (its special_tokens_map). */
const SPECIAL_TOKENS = [
  "bos_token",
  "eos_token",
  "unk_token",
  "sep_token",
  "pad_token",
  "cls_token",
  "mask_token",
];

/**
 * The template text and where it came from: tokenizer_config.json's
 * "chat_template" (a string, or a list of named templates whose "default"
 * is used), else chat_template.jinja, else chat_template.json, as
 * transformers looks for it.
 */
async function templateSource(
  dir: string,
  config: Json,
): Promise<{ text: string; file: string } | undefined> {
  const configFile = `${dir}/tokenizer_config.json`;
  const named = (value: unknown, file: string) => {
    if (typeof value === "string") return { text: value, file };
    if (Array.isArray(value)) {
      const entry = value.find((t) => t?.name === "default") ?? value[0];
      if (typeof entry?.template === "string") return { text: entry.template as string, file };
    }
    return undefined;
  };
  const own = named(config.chat_template, configFile);
  if (own !== undefined) return own;
  const jinja = `${dir}/chat_template.jinja`;
  const text = await readText(jinja);
  if (text !== undefined) return { text, file: jinja };
  const jsonFile = `${dir}/chat_template.json`;
  const json = await readJson(jsonFile, "");
  return json === undefined ? undefined : named(json.chat_template, jsonFile);
}

/**
 * The chat template of the model directory `dir`, compiled; throws an
 * InputError naming the file when there is none or it does not parse.
 */
export async function loadHfChatTemplate(dir: string): Promise<ChatTemplate> {
  const clean = trimDir(dir);
  const config = (await readJson(`${clean}/tokenizer_config.json`, NEEDS))!;
  const source = await templateSource(clean, config);
  if (source === undefined) {
    throw new InputError(
      `--apply-chat-template: "${clean}/tokenizer_config.json" has no "chat_template" ` +
        "(and there is no chat_template.jinja or chat_template.json beside it)",
    );
  }
  const { Template } = await import("@huggingface/jinja");
  let template: InstanceType<typeof Template>;
  try {
    template = new Template(source.text);
  } catch (error) {
    throw new InputError(
      `--apply-chat-template: the chat template of "${source.file}" does not parse: ${
        (error as Error).message
      }`,
    );
  }
  const context: Json = {};
  for (const name of SPECIAL_TOKENS) {
    const text = tokenText(config[name]);
    if (text !== undefined) context[name] = text;
  }
  if (Array.isArray(config.additional_special_tokens)) {
    context.additional_special_tokens = config.additional_special_tokens.map(tokenText);
  }
  return {
    file: source.file,
    render(messages) {
      try {
        return template.render({ ...context, messages, add_generation_prompt: true });
      } catch (error) {
        throw new InputError(
          `--apply-chat-template: the chat template of "${source.file}" failed to render: ${
            (error as Error).message
          }`,
        );
      }
    },
  };
}

/**
 * The tokenizer of the model directory `dir`; throws an InputError naming
 * the file and what is missing or not supported.
 */
export async function loadHfTokenizer(dir: string): Promise<Tokenizer> {
  const clean = trimDir(dir);
  const tokenizerFile = `${clean}/tokenizer.json`;
  const json = await readJson(tokenizerFile, NEEDS);
  const config = await readJson(`${clean}/tokenizer_config.json`, NEEDS);
  const { Tokenizer: HfTokenizer } = await import("@huggingface/tokenizers");
  let tokenizer: InstanceType<typeof HfTokenizer>;
  try {
    tokenizer = new HfTokenizer(json!, config!);
  } catch (error) {
    const model = (json!.model as { type?: unknown } | undefined)?.type;
    throw new InputError(
      `--tokenizer: "${tokenizerFile}"${
        typeof model === "string" ? ` (model type ${model})` : ""
      } is not supported by @huggingface/tokenizers: ${(error as Error).message}`,
    );
  }
  const options = { add_special_tokens: false };
  // Like the built-in tokenizers: the text's own tokens, special-token text parsed as such.
  const encode = (text: string) => text === "" ? [] : tokenizer.encode(text, options).ids;
  return {
    name: dir,
    count: (text) => encode(text).length,
    encode,
    decode: (tokens) => tokenizer.decode([...tokens]),
    fromModel: true,
  };
}
