import assert from "node:assert/strict";
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { PAYLOAD } from "../input/llm_data.ts";
import type { TokenTiming } from "../types/timing.ts";
import { type ModelConfig, type RunningServer, startServer } from "../server/mod.ts";
import { InferError } from "./errors.ts";
import { OpenAiClient } from "./openai.ts";
import type { InferRequest } from "../types/tensor.ts";

const MODELS: ModelConfig[] = [
  { name: "llm", llm: { ttft_ms: 10, itl_ms: 2, output_tokens: 5 } },
  { name: "closing", llm: { ttft_ms: 1, itl_ms: 1, output_tokens: 3, close_after_stream: true } },
  { name: "thinking", llm: { ttft_ms: 1, itl_ms: 1, output_tokens: 5, reasoning_tokens: 3 } },
];

function payload(body: Record<string, unknown>): InferRequest {
  const data = encodeBytesElements([JSON.stringify(body)]);
  return { inputs: [{ name: PAYLOAD, datatype: "BYTES", shape: [1], data }], outputs: [] };
}

function newTiming(): TokenTiming {
  return {
    start: 0,
    sendEnd: 0,
    recvStart: 0,
    end: 0,
    responses: 0,
    outputTokens: 0,
    inputTokens: 0,
    usage: false,
  };
}

async function withClient(
  endpoint: string,
  fn: (client: OpenAiClient, server: RunningServer) => Promise<void>,
): Promise<void> {
  const server = await startServer({ models: MODELS });
  const client = new OpenAiClient({ url: server.addr, endpoint });
  try {
    await fn(client, server);
  } finally {
    await client.close();
    await server.close();
  }
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "llm",
  messages: [{ role: "user", content: "three word prompt" }],
  ...extra,
});

Deno.test("a streamed chat answer: first token, token chunks, usage and the events", async () => {
  await withClient("v1/chat/completions", async (client) => {
    const session = await client.openSession();
    const timing = newTiming();
    let responses = 0;
    const request = client.prepare(
      payload(chat({ stream: true, stream_options: { include_usage: true } })),
    );
    const outputs = await session.infer(request, timing, {
      decodeOutputs: true,
      onResponse: () => responses++,
    });
    assert.equal(timing.responses, 5, "the role chunk carries no token");
    assert.equal(responses, 5);
    assert.equal(timing.usage, true);
    assert.equal(timing.outputTokens, 5);
    assert.equal(timing.inputTokens, -1, "no tokenizer counted the prompt");
    assert.equal(timing.serverInputTokens, 3 + 28, "the prompt and llama.cpp's chat template");
    assert.equal(timing.secondResponse, timing.chunkTimes![1]);
    assert.equal(timing.lastResponse, timing.chunkTimes![4]);
    const ttft = timing.firstResponse! - timing.start;
    assert.ok(ttft >= 9, `time to first token ${ttft} ms`);
    // The server never sends the last token early (a late timer can bunch tokens together).
    assert.ok(timing.end - timing.start >= 10 + 4 * 2 - 1, "four gaps of 2 ms after 10 ms");
    assert.equal(timing.chunkTimes!.length, 5, "a time per token chunk");
    assert.ok(timing.chunkTimes!.every((ms, i) => i === 0 || ms >= timing.chunkTimes![i - 1]));
    const events = decodeBytesElements(outputs![0].data).map((e) => new TextDecoder().decode(e));
    assert.equal(events.length, 8, "role, 5 tokens, finish and usage chunks");
    assert.equal(JSON.parse(events[7]).usage.completion_tokens, 5);
    session.close();
  });
});

Deno.test("streamed completions without usage count chunks; answers at once count one", async () => {
  await withClient("v1/completions", async (client) => {
    const session = await client.openSession();
    const timing = newTiming();
    await session.infer(
      client.prepare(payload({ model: "llm", prompt: "a b", stream: true, max_tokens: 3 })),
      timing,
    );
    assert.equal(timing.usage, false);
    assert.equal(timing.outputTokens, 3, "max_tokens caps the answer");
    assert.equal(timing.inputTokens, -1);
    await session.infer(
      client.prepare(payload({ model: "llm", prompt: "a b", max_tokens: 8, ignore_eos: true })),
      timing,
    );
    assert.equal(timing.responses, 1);
    assert.equal(timing.firstResponse, timing.end, "the first token arrives with the answer");
    assert.equal(timing.usage, true);
    assert.equal(timing.outputTokens, 8, "ignore_eos gives exactly max_tokens");
    assert.equal(timing.serverInputTokens, 2);
    session.close();
  });
});

Deno.test("reasoning_content chunks are output, counted apart with their text", async () => {
  const words = { name: "words", count: () => 0, encode: () => [], decode: () => "" };
  const server = await startServer({ models: MODELS });
  const client = new OpenAiClient({
    url: server.addr,
    endpoint: "v1/chat/completions",
    tokenizer: words,
  });
  try {
    const session = await client.openSession();
    const timing = newTiming();
    await session.infer(
      client.prepare(payload({ ...chat({ stream: true }), model: "thinking" })),
      timing,
    );
    assert.equal(timing.responses, 5, "reasoning and content chunks are tokens alike");
    assert.equal(timing.reasoningChunks, 3);
    assert.equal(timing.reasoningText, "the quick brown");
    assert.equal(timing.outputText, "the quick brown dog and");
    assert.equal(timing.reasoningUsage, -1, "no completion_tokens_details, as llama.cpp");
    session.close();
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("a server that closes the connection after each stream is handled", async () => {
  await withClient("v1/chat/completions", async (client) => {
    const session = await client.openSession();
    const request = client.prepare(payload({ ...chat({ stream: true }), model: "closing" }));
    for (let i = 0; i < 3; i++) {
      const timing = newTiming();
      await session.infer(request, timing);
      assert.equal(timing.outputTokens, 3);
    }
    session.close();
  });
});

Deno.test("server errors name the problem", async () => {
  await withClient("v1/chat/completions", async (client) => {
    const session = await client.openSession();
    await assert.rejects(
      session.infer(client.prepare(payload({ ...chat(), model: "nope" })), newTiming()),
      (error) => {
        assert.ok(error instanceof InferError);
        assert.match(error.message, /Server returned 404: The model `nope` does not exist/);
        return true;
      },
    );
    await assert.rejects(
      session.infer(client.prepare(payload({ model: "llm", messages: [] })), newTiming()),
      /'messages' must be a non-empty array/,
    );
    session.close();
    assert.deepEqual((await client.modelInfo("llm", "")).inputs, [
      { name: PAYLOAD, datatype: "BYTES", dims: [1] },
    ]);
    assert.throws(() => client.prepare({ inputs: [], outputs: [] }), TypeError);
  });
});

Deno.test("a stream cut right after [DONE], before the chunked body ends, is complete", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const encoder = new TextEncoder();
  const chunk = (text: string) => `${encoder.encode(text).length.toString(16)}\r\n${text}\r\n`;
  const token = (text: string) =>
    chunk(`data: ${JSON.stringify({ choices: [{ index: 0, text }] })}\n\n`);
  const serving = (async () => {
    for (let i = 0; i < 2; i++) {
      const conn = await listener.accept();
      await conn.read(new Uint8Array(65536));
      await conn.write(encoder.encode(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
          token("a") + token("b") + chunk("data: [DONE]\n\n"),
      ));
      conn.close();
    }
  })();
  const client = new OpenAiClient({
    url: `127.0.0.1:${listener.addr.port}`,
    endpoint: "v1/completions",
  });
  try {
    const session = await client.openSession();
    const request = client.prepare(payload({ prompt: "x", stream: true }));
    for (let i = 0; i < 2; i++) {
      const timing = newTiming();
      await session.infer(request, timing);
      assert.equal(timing.outputTokens, 2, `request ${i}`);
    }
    session.close();
  } finally {
    await client.close();
    await serving;
    listener.close();
  }
});

Deno.test("the tokenizer counts prompts when requests are prepared, never while they run", async () => {
  const server = await startServer({ models: MODELS });
  let counted = 0;
  const tokenizer = {
    name: "words",
    count: (text: string) => (counted++, text.split(" ").length),
    encode: () => [],
    decode: () => "",
    fromModel: true,
  };
  const rendered: unknown[] = [];
  const chatTemplate = {
    file: "tokenizer_config.json",
    render: (messages: readonly unknown[]) => (rendered.push(messages), "<s> three word prompt"),
  };
  const client = new OpenAiClient({
    url: server.addr,
    endpoint: "v1/chat/completions",
    tokenizer,
    chatTemplate,
  });
  try {
    const body = chat({ stream: true, stream_options: { include_usage: true }, max_tokens: 5 });
    const requests = [client.prepare(payload(body)), client.prepare(payload(chat()))];
    assert.deepEqual([counted, rendered.length], [2, 2], "one count and render per request");
    const session = await client.openSession();
    for (const decodeOutputs of [false, true]) {
      for (const request of requests) {
        const timing = newTiming();
        await session.infer(request, timing, { decodeOutputs, onOutputs: () => {} });
        // The rendered template's count; the asked length; the usage's cached tokens (none).
        assert.deepEqual(
          [timing.inputTokens, timing.requestedTokens, timing.cachedTokens],
          [4, request === requests[0] ? 5 : -1, -1],
        );
        assert.ok(timing.outputText!.length > 0, "the text is kept for the level's end");
      }
    }
    assert.deepEqual([counted, rendered.length], [2, 2], "nothing counted in the loop");
    session.close();
  } finally {
    await client.close();
    await server.close();
  }
});
