/**
 * The LLM APIs of the endpoint table end to end: OpenAI's Responses API,
 * Anthropic's Messages API, TGI's and SGLang's generate against the
 * reference server (which answers each in its published shape, so token
 * counts and times have a ground truth), streamed and not, with
 * --extra-inputs; the template endpoint against llama.cpp's native
 * /completion, whose own counters say what it did.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { runCli } from "./_helpers.ts";
import { llama, startLlama } from "./_llama.ts";

type Json = Record<string, unknown>;

const skipLlama = "reason" in llama;
if ("reason" in llama) console.log(`llm_apis_test: llama.cpp test skipped: ${llama.reason}`);

/** One run's summary (first level) and exported request bodies and answers. */
async function profile(args: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_llm_apis_" });
  try {
    const r = await runCli([
      ...args,
      ...["--profile-export-file", `${dir}/e.json`, "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const level = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0];
    const requests = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests;
    const bodies = requests.map((q) => JSON.parse((q.request_inputs as Json).payload as string));
    return { stdout: r.stdout, level, bodies, llm: level.llm as Json };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const avg = (llm: Json, key: string) => (llm[key] as { avg: number } | undefined)?.avg;

/** The APIs, each with the body fields it must carry. */
const APIS: ReadonlyArray<{ type: string; fields: string[]; chatTemplate: boolean }> = [
  { type: "responses", fields: ["model", "input", "max_output_tokens"], chatTemplate: true },
  { type: "messages", fields: ["model", "max_tokens", "messages"], chatTemplate: true },
  { type: "huggingface_generate", fields: ["inputs", "parameters"], chatTemplate: false },
  { type: "sglang_generate", fields: ["text", "sampling_params"], chatTemplate: false },
];

Deno.test("Responses, Messages, TGI and SGLang APIs: every request answered, counts the server's", async () => {
  const server = await startServerInWorker({
    models: [{
      name: "llm",
      llm: { ttft_ms: 30, itl_ms: 4, output_tokens: 40, chat_template_tokens: 5 },
    }],
  });
  try {
    for (const { type, fields, chatTemplate } of APIS) {
      for (const streaming of [false, true]) {
        const what = `${type}${streaming ? " streamed" : ""}`;
        const run = await profile([
          ...["-m", "llm", "--service-kind", "openai", "--endpoint-type", type, "-u", server.addr],
          ...(streaming ? ["--streaming"] : []),
          ...["--synthetic-input-tokens-mean", "12", "--output-tokens-mean", "7"],
          ...["--concurrency-range", "2", "--request-count", "6"],
          ...["--extra-inputs", "temperature:0", "top_p:0.5"],
        ]);
        const client = run.level.client as Json;
        assert.equal(client.request_count, 6, what);
        assert.equal(client.error_count, 0, what);
        for (const field of fields) assert.ok(field in run.bodies[0], `${what}: ${field}`);
        // The sampling parameters go where the API keeps them.
        const sampling = type === "huggingface_generate"
          ? run.bodies[0].parameters
          : type === "sglang_generate"
          ? run.bodies[0].sampling_params
          : run.bodies[0];
        assert.deepEqual([sampling.temperature, sampling.top_p], [0, 0.5], what);
        assert.equal(run.bodies[0].stream ?? false, streaming && type !== "huggingface_generate");
        assert.equal(avg(run.llm, "output_sequence_length_tokens"), 7, what);
        assert.equal(avg(run.llm, "input_sequence_length_tokens"), 12, what);
        // The server's own prompt count where the API reports one (TGI's does not).
        const serverIsl = avg(run.llm, "server_input_sequence_length_tokens");
        if (type !== "huggingface_generate") {
          assert.equal(serverIsl, 12 + (chatTemplate ? 5 : 0), what);
        }
        assert.match(run.stdout, /output tokens: usage/, what);
        const ttft = avg(run.llm, "time_to_first_token_ms");
        if (streaming) {
          assert.ok(ttft !== undefined && ttft >= 25, `${what}: TTFT ${ttft}`);
          // 7 tokens, 4 ms apart on the server's schedule (a late first token shortens the rest).
          const itl = avg(run.llm, "inter_token_latency_ms")!;
          assert.ok(itl > 0 && itl < 100, `${what}: ITL ${itl}`);
        } else assert.equal(ttft, undefined, what);
      }
    }
  } finally {
    await server.close();
  }
});

Deno.test("endpoint types: paths follow the type, refusals name what is missing", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 3 } }],
  });
  try {
    const base = ["-m", "llm", "--service-kind", "openai", "-u", server.addr];
    const count = ["--request-count", "2", "--synthetic-input-tokens-mean", "4"];
    // TGI streams by path: --streaming picks generate_stream; --endpoint generate_stream alone is TGI.
    for (
      const args of [["--endpoint-type", "huggingface_generate", "--streaming"], [
        "--endpoint",
        "generate_stream",
      ]]
    ) {
      const run = await profile([...base, ...args, ...count]);
      assert.ok(avg(run.llm, "time_to_first_token_ms") !== undefined, args.join(" "));
    }
    const messages = await runCli([...base, "--endpoint-type", "messages", ...count]);
    assert.equal(messages.code, 1);
    assert.match(messages.stderr, /requires max_tokens.*--output-tokens-mean N or --extra-inputs/);
    const template = await runCli([...base, "--endpoint-type", "template", ...count]);
    assert.equal(template.code, 1);
    assert.match(template.stderr, /needs --endpoint PATH/);
    assert.match(template.stderr, /needs --extra-inputs payload_template/);
    const placeholder = await runCli([
      ...base,
      ...["--endpoint-type", "template", "--endpoint", "x", ...count],
      ...["--extra-inputs", 'payload_template:{"p": {{ prompt }}}', "response_field:a..b"],
    ]);
    assert.equal(placeholder.code, 1);
    assert.match(placeholder.stderr, /unknown placeholder \{\{ prompt \}\} \(known: text, texts/);
    assert.match(placeholder.stderr, /response_field: Invalid JSON path "a\.\.b"/);
    const stray = await runCli([
      ...base,
      "--endpoint-type",
      "chat",
      "--extra-inputs",
      "response_field:x",
    ]);
    assert.match(stray.stderr, /response_field applies to --endpoint-type template only/);
    const sessions = await runCli([
      ...base,
      ...["--endpoint-type", "messages", "--session-concurrency", "1"],
    ]);
    assert.match(sessions.stderr, /--session-concurrency needs --endpoint-type chat/);
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "template endpoint against llama.cpp's native /completion: its counts equal the server's",
  ignore: skipLlama,
  async fn() {
    const server = await startLlama();
    try {
      for (const streaming of [false, true]) {
        const before = await server.counts();
        const run = await profile([
          ...["-m", "tiny", "--service-kind", "openai", "-u", server.addr],
          ...["--endpoint-type", "template", "--endpoint", "completion"],
          ...(streaming ? ["--streaming"] : []),
          ...["--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "9"],
          ...["--concurrency-range", "2", "--request-count", "8"],
          "--extra-inputs",
          'payload_template:{"prompt": {{ text|tojson }}, "n_predict": {{ max_tokens }}, ' +
          '"stream": {{ stream }}, "ignore_eos": true}',
          "response_field:content",
          "response_tokens_field:tokens_predicted",
          "response_prompt_tokens_field:tokens_evaluated",
          "temperature:0",
        ]);
        const after = await server.counts();
        const what = streaming ? "streamed" : "not streamed";
        assert.equal((run.level.client as Json).request_count, 8, what);
        assert.equal(after.requests - before.requests, 8, what);
        assert.equal(run.bodies[0].temperature, 0);
        assert.equal(run.bodies[0].n_predict, 9);
        // Every output token the server generated, and its prompt count: the prompt and its BOS.
        assert.equal(avg(run.llm, "output_sequence_length_tokens"), 9, what);
        assert.equal(after.tokens - before.tokens, 8 * 9, what);
        assert.equal(avg(run.llm, "server_input_sequence_length_tokens"), 17, what);
        if (streaming) assert.ok(avg(run.llm, "time_to_first_token_ms")! > 0);
      }
    } finally {
      await server.stop();
    }
  },
});

Deno.test("several -u servers: the connections go to each in turn", async () => {
  // The same model answering after 10 ms on one server and 400 ms on the other.
  const servers = await Promise.all([10, 400].map((ttft) =>
    startServerInWorker({
      models: [{ name: "llm", llm: { ttft_ms: ttft, itl_ms: 1, output_tokens: 2 } }],
    })
  ));
  try {
    const run = await profile([
      ...["-m", "llm", "--service-kind", "openai", "--endpoint-type", "chat", "--streaming"],
      ...["-u", `${servers[0].addr},${servers[1].addr}`, "--concurrency-range", "2"],
      ...["--request-count", "8", "--synthetic-input-tokens-mean", "4"],
    ]);
    assert.equal((run.level.client as Json).request_count, 8);
    const ttft = run.llm.time_to_first_token_ms as { min: number; max: number; p50: number };
    assert.ok(ttft.min < 300 && ttft.max >= 399, `TTFT ${JSON.stringify(ttft)}`);
    const refused = await runCli(["-m", "x", "-u", `${servers[0].addr},${servers[1].addr}`]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Several servers in -u .* need --service-kind openai/);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});
