/**
 * AIPerf's workloads end to end: synthetic multi-turn conversations (history,
 * delays, X-Correlation-ID, per-turn and per-session metrics) against the
 * reference server, and against llama.cpp's server the prefix cache hits
 * that a shared-prefix pool and a Mooncake trace's shared hash blocks give,
 * beside runs without shared prefixes, the trace replayed at its timestamps.
 */
import assert from "node:assert/strict";
import { parseProfileExport } from "../lib/report/export.ts";
import { startServerInWorker } from "../lib/server/mod.ts";
import { runCli } from "./_helpers.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { llama, startLlama } from "./_llama.ts";

const skip = "reason" in llama;
if ("reason" in llama) console.log(`workloads_test: llama.cpp tests skipped: ${llama.reason}`);

const CHAT = ["--service-kind", "openai", "--endpoint", "v1/chat/completions"];

Deno.test("synthetic conversations: history, delays, turns and sessions in the summary", async () => {
  const server = await startServerInWorker({
    models: [{ name: "chat", llm: { ttft_ms: 5, itl_ms: 1, output_tokens: 4 } }],
  });
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCli([
      ...["-m", "chat", ...CHAT, "-u", server.addr, "--streaming"],
      ...["--conversation-num", "4", "--conversation-turn-mean", "3"],
      ...["--conversation-turn-delay-mean", "30", "--session-concurrency", "2"],
      ...["--synthetic-input-tokens-mean", "12", "--prefix-prompt-pool-size", "1"],
      ...["--prefix-prompt-length", "8", "--random-seed", "3"],
      ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`],
      ...["--llm-csv", `${dir}/llm.csv`, "--report-html", `${dir}/r.html`],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Turn 0: .*\n {4}Turn 1: .*\n {4}Turn 2: .*\n {4}Sessions: 4 /);
    const csv = await Deno.readTextFile(`${dir}/llm.csv`);
    assert.deepEqual(csv.match(/^Turn Index,\d+$/gm), [
      "Turn Index,0",
      "Turn Index,1",
      "Turn Index,2",
    ]);
    const page = await Deno.readTextFile(`${dir}/r.html`);
    for (const t of [0, 1, 2]) assert.ok(page.includes(`<td>2, turn ${t}</td>`), `HTML turn ${t}`);
    const requests = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`)).experiments[0]
      .requests;
    assert.equal(requests.length, 12);
    const bySession = Map.groupBy(requests, (q) => q.request_inputs.session_id as string);
    assert.deepEqual([...bySession.keys()].sort(), [0, 1, 2, 3].map((i) => `conversation-${i}`));
    const prefixes = new Set<string>();
    for (const turns of bySession.values()) {
      turns.sort((a, b) => Number(a.timestamp - b.timestamp));
      turns.forEach((turn, t) => {
        const { messages } = JSON.parse(turn.request_inputs.payload as string);
        // The history: each earlier user turn and its answer, then this turn.
        assert.deepEqual(
          messages.map((m: { role: string }) => m.role),
          [...Array(t).fill(["user", "assistant"]).flat(), "user"],
        );
        if (t === 0) prefixes.add(messages[0].content.split(" ").slice(0, 8).join(" "));
        if (t > 0) {
          const last = turns[t - 1].response_timestamps.at(-1)!;
          assert.ok(Number(turn.timestamp - last) / 1e6 >= 29, "sent after the turn delay");
        }
      });
    }
    assert.equal(prefixes.size, 1, "every conversation opens with the pool's one prefix");
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
    const llm = summary.levels[0].llm;
    assert.deepEqual(llm.turns.map((t: { turn_index: number }) => t.turn_index), [0, 1, 2]);
    for (const turn of llm.turns) assert.equal(turn.llm.request_count, 4);
    // Each turn's prompt holds the history: the input grows turn by turn.
    const isl = llm.turns.map((t: { llm: { input_sequence_length_tokens: { avg: number } } }) =>
      t.llm.input_sequence_length_tokens.avg
    );
    assert.ok(isl[0] < isl[1] && isl[1] < isl[2], `ISL by turn ${isl}`);
    assert.deepEqual(Object.keys(llm.sessions).sort(), [...bySession.keys()].sort());
    for (const session of Object.values(llm.sessions) as Array<{ request_count: number }>) {
      assert.equal(session.request_count, 3);
    }
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("X-Correlation-ID: one per conversation, on each of its turns; X-Request-ID per request", async () => {
  // What the client sends is the subject: a loopback server that records it and answers.
  const seen: Array<{ id: string | null; request: string | null; turns: number }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    // Other requests (the scrape of /metrics) find nothing here.
    if (req.method !== "POST") return new Response("", { status: 404 });
    const body = await req.json();
    seen.push({
      id: req.headers.get("x-correlation-id"),
      request: req.headers.get("x-request-id"),
      turns: body.messages.length,
    });
    return Response.json({
      id: "x",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 },
    });
  });
  try {
    const r = await runCli([
      ...["-m", "m", ...CHAT, "-u", `127.0.0.1:${server.addr.port}`],
      ...["--conversation-num", "3", "--conversation-turn-mean", "2"],
      ...["--session-concurrency", "1", "--synthetic-input-tokens-mean", "4"],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(seen.length, 6);
    const ids = seen.map((s) => s.id);
    assert.ok(ids.every((id) => id !== null && /^[0-9a-f-]{36}$/.test(id)), String(ids));
    // Sessions run one after the other: turns 1 and 2 of each share its id.
    assert.deepEqual(seen.map((s) => s.turns), [1, 3, 1, 3, 1, 3]);
    assert.deepEqual([ids[0], ids[2], ids[4]], [ids[1], ids[3], ids[5]]);
    assert.equal(new Set(ids).size, 3);
    // AIPerf's X-Request-ID: one per request.
    assert.equal(new Set(seen.map((s) => s.request)).size, 6);
    assert.ok(seen.every((s) => s.request !== null && !ids.includes(s.request)));
  } finally {
    await server.shutdown();
  }
});

/** The llama.cpp server's counters over one run, and its summary and export. */
async function llamaRun(addr: string, dir: string, args: string[]) {
  const r = await runCli([
    ...["-m", "tiny", ...CHAT, "-u", addr, "--streaming"],
    ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`, "--overwrite"],
    ...args,
  ], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const level = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).levels[0];
  const exported = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`));
  return { level, requests: exported.experiments[0].requests, stdout: r.stdout };
}

Deno.test({
  name: "llama.cpp: shared prefixes (pool, Mooncake hash blocks) hit its prefix cache, others not",
  ignore: skip,
  async fn() {
    const server = await startLlama();
    const dir = await Deno.makeTempDir();
    try {
      const synthetic = [
        ...["--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "4"],
        ...["--concurrency-range", "1", "--request-count", "8", "--num-prompts", "8"],
      ];
      const plain = await llamaRun(server.addr, dir, [...synthetic, "--random-seed", "1"]);
      const pooled = await llamaRun(server.addr, dir, [
        ...synthetic,
        ...[
          "--random-seed",
          "2",
          "--prefix-prompt-pool-size",
          "1",
          "--prefix-prompt-length",
          "256",
        ],
      ]);
      const cached = (run: typeof plain) => run.level.llm_server.cached_prompt_tokens;
      // Without a shared prefix only the chat template's opening (a few tokens) is reused.
      assert.ok(cached(plain) < 8 * 40, `no prefix: ${cached(plain)} cached`);
      // With one: every request after the first reuses at least the 256-token prefix.
      assert.ok(cached(pooled) >= 7 * 256, `prefix pool: ${cached(pooled)} cached`);
      assert.equal(pooled.level.llm.input_sequence_length_tokens.avg, 64 + 256);

      // A trace of 6 records at 50 ms steps: 2 of 3 blocks of 64 tokens shared, or none.
      const trace = (shared: boolean) =>
        Array.from({ length: 6 }, (_, i) =>
          JSON.stringify({
            timestamp: 50 * i,
            input_length: 180,
            output_length: 4,
            hash_ids: shared ? [100, 101, 200 + i] : [300 + 3 * i, 301 + 3 * i, 302 + 3 * i],
          })).join("\n");
      const runTrace = async (shared: boolean) => {
        await Deno.writeTextFile(`${dir}/trace.jsonl`, trace(shared));
        return await llamaRun(server.addr, dir, [
          ...["--custom-dataset-type", "mooncake_trace", "--input-file", `${dir}/trace.jsonl`],
          ...["--synthetic-input-tokens-block-size", "64", "--random-seed", shared ? "4" : "5"],
          ...["--ignore-send-lag", "--output-tokens-mean-deterministic"],
        ]);
      };
      const unique = await runTrace(false);
      const shared = await runTrace(true);
      assert.ok(cached(unique) < 6 * 40, `unique blocks: ${cached(unique)} cached`);
      assert.ok(cached(shared) >= 5 * 128, `shared blocks: ${cached(shared)} cached`);
      for (const run of [unique, shared]) {
        assert.equal(run.level.llm.input_sequence_length_tokens.avg, 180);
        // Each record's output_length, exact.
        assert.equal(run.level.llm.output_sequence_length_tokens.avg, 4);
        // Replayed at its timestamps (a timed trace is --fixed-schedule by itself).
        const sends = run.requests.map((q) => Number(q.timestamp) / 1e6).sort((a, b) => a - b);
        sends.forEach((t, i) => assert.ok(Math.abs(t - sends[0] - 50 * i) < 25, `send ${i}`));
        for (const q of run.requests) {
          assert.equal(JSON.parse(q.request_inputs.payload as string).max_tokens, 4);
        }
      }
      console.log(
        `cached prompt tokens: no prefix ${cached(plain)}, pool ${cached(pooled)}, ` +
          `trace unique ${cached(unique)}, trace shared ${cached(shared)}`,
      );
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** One of each dataset file, run as AIPerf would; every request must succeed. */
async function datasetRuns(addr: string, model: string) {
  const dir = await Deno.makeTempDir();
  const write = (name: string, lines: unknown[]) =>
    Deno.writeTextFile(`${dir}/${name}`, lines.map((l) => JSON.stringify(l)).join("\n"));
  try {
    await write("single.jsonl", [{ text: "tell me a story" }, { texts: ["one", "two"] }]);
    await write("multi.jsonl", [
      { session_id: "s", turns: [{ text: "hello" }, { text: "and then", delay: 10 }] },
    ]);
    await Deno.mkdir(`${dir}/pool`);
    await write("pool/queries.jsonl", [{ text: "query one" }, { text: "query two" }]);
    await write("pool/passages.jsonl", [{ text: "a passage of text" }]);
    await Deno.writeTextFile(
      `${dir}/sharegpt.json`,
      JSON.stringify([{
        conversations: [
          { from: "human", value: "name three colors of the rainbow please" },
          { from: "gpt", value: "red orange and yellow are three" },
        ],
      }]),
    );
    const runs: Array<[string, string[]]> = [
      ["single_turn", [
        "--custom-dataset-type",
        "single_turn",
        "--input-file",
        `${dir}/single.jsonl`,
      ]],
      ["multi_turn", [
        ...["--custom-dataset-type", "multi_turn", "--input-file", `${dir}/multi.jsonl`],
        ...["--session-concurrency", "1"],
      ]],
      ["random_pool", [
        ...["--custom-dataset-type", "random_pool", "--input-file", `${dir}/pool`],
        "--conversation-num",
        "3",
      ]],
      ["sharegpt", ["--public-dataset", "sharegpt", "--input-file", `${dir}/sharegpt.json`]],
    ];
    const counts: Record<string, number> = {};
    for (const [name, args] of runs) {
      const r = await runCli([
        ...["-m", model, ...CHAT, "-u", addr, "--streaming", "--request-count", "4"],
        ...["--output-tokens-mean", "3", "--output-tokens-mean-deterministic"],
        ...["--summary-json", `${dir}/s.json`, "--overwrite", ...args],
      ], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, `${name}: ${r.stderr}${r.stdout}`);
      const level = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).levels[0];
      assert.equal(level.llm.output_sequence_length_tokens.avg, 3, name);
      counts[name] = level.llm.request_count;
    }
    return counts;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("dataset files against the reference server: every request answered", async () => {
  const server = await startServerInWorker({
    models: [{ name: "chat", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 8 } }],
  });
  try {
    const counts = await datasetRuns(server.addr, "chat");
    assert.equal(counts.multi_turn, 2, "the session's two turns, once");
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "dataset files against llama.cpp: every request answered, content parts included",
  ignore: skip,
  async fn() {
    const server = await startLlama();
    try {
      const counts = await datasetRuns(server.addr, "tiny");
      assert.equal(counts.multi_turn, 2, "the session's two turns, once");
    } finally {
      await server.stop();
    }
  },
});
