/**
 * AIPerf's image and audio inputs (--image-*, --audio-*): synthetic chat
 * turns carry PNG images and WAV clips as content parts. The reference
 * server takes (and checks) them; llama.cpp's text-only model refuses them,
 * and inferperf says so.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { llama, startLlama } from "./_llama.ts";
import { runCli } from "./_helpers.ts";

const skipLlama = "reason" in llama;
if ("reason" in llama) console.log(`multimodal_test: llama.cpp tests skipped: ${llama.reason}`);

type Json = Record<string, unknown>;

const MEDIA = [
  ...["--image-width-mean", "64", "--image-height-mean", "32", "--image-batch-size", "2"],
  ...["--audio-length-mean", "0.2", "--audio-sample-rates", "8,16", "--audio-depths", "16"],
];

function run(addr: string, dir: string, model: string) {
  return runCli([
    ...["-m", model, "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
    ...["-u", addr, "--streaming", "--synthetic-input-tokens-mean", "8", "--num-prompts", "3"],
    ...["--output-tokens-mean", "4", "--output-tokens-mean-deterministic", ...MEDIA],
    ...["--concurrency-range", "1", "--request-count", "6"],
    ...["--profile-export-file", `${dir}/e.json`],
  ], { timeoutMs: 60_000 });
}

Deno.test("images and audio reach the reference server as chat content parts", async () => {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 1, itl_ms: 1, output_tokens: 4 } }],
  });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_media_" });
  try {
    const r = await run(server.addr, dir, "llm");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Request count: 6/);
    const requests = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests;
    const content = JSON.parse((requests[0].request_inputs as Json).payload as string)
      .messages[0].content as Json[];
    assert.deepEqual(content.map((p) => p.type), ["text", "image_url", "image_url", "input_audio"]);
    assert.match((content[1].image_url as Json).url as string, /^data:image\/png;base64,/);
    assert.equal((content[3].input_audio as Json).format, "wav");
    // The server checks the parts as an OpenAI server would.
    const bad = await fetch(`http://${server.addr}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "llm",
        messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }],
      }),
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /input_audio part needs base64 data and a format/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
});

Deno.test({
  name: "llama.cpp's text-only model refuses images and audio: failed requests with its reason",
  ignore: skipLlama,
  async fn() {
    const server = await startLlama();
    const dir = await Deno.makeTempDir({ prefix: "inferperf_media_" });
    try {
      const r = await run(server.addr, dir, "tiny");
      // Every request failed: perf_analyzer's exit code for a level without a valid request.
      assert.notEqual(r.code, 0);
      assert.match(r.stdout + r.stderr, /image input is not supported/);
      assert.match(r.stdout + r.stderr, /500/);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await server.stop();
    }
  },
});
