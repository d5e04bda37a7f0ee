/**
 * --profile-export-jsonl: a line per request with its figures, against the
 * reference server's known schedule: valid and failed requests, sessions'
 * turns, a KServe model; every line valid against
 * docs/request_records.schema.json.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { runCli } from "./_helpers.ts";

type Json = Record<string, unknown>;
type Metric = { value: number; unit: string };

async function records(args: string[]): Promise<{ lines: Json[]; code: number }> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_records_" });
  try {
    const r = await runCli([...args, "--profile-export-jsonl", `${dir}/r.jsonl`], {
      timeoutMs: 60_000,
    });
    const text = await Deno.readTextFile(`${dir}/r.jsonl`);
    assert.ok(text.endsWith("\n"));
    const schema = await loadSchema("request_records.schema.json");
    const lines = text.trimEnd().split("\n").map((line) => JSON.parse(line) as Json);
    for (const line of lines) assert.deepEqual(validate(line, schema), [], JSON.stringify(line));
    return { lines, code: r.code };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const metric = (line: Json, name: string) => (line.metrics as Record<string, Metric>)[name];

Deno.test("request records: each streamed request's figures, failures with their cause", async () => {
  const server = await startServerInWorker({
    models: [{
      name: "llm",
      llm: {
        ttft_ms: 40,
        itl_ms: 10,
        output_tokens: 6,
        chat_template_tokens: 3,
        error_rate: 0.25,
        error_after_tokens: 2,
        error_kind: "event",
      },
    }],
  });
  try {
    const { lines, code } = await records([
      ...["-m", "llm", "--service-kind", "openai", "--endpoint-type", "chat", "-u", server.addr],
      ...["--streaming", "--synthetic-input-tokens-mean", "10", "--output-tokens-mean", "6"],
      ...["--concurrency-range", "2", "--request-count", "8"],
    ]);
    assert.equal(code, 3, "failed requests fail the run");
    assert.equal(lines.length, 8);
    const failed = lines.filter((l) => l.error !== null);
    assert.equal(failed.length, 2);
    for (const line of failed) {
      const error = line.error as Json;
      assert.equal(error.type, "error event in the stream");
      assert.match(String(error.message), /Injected mid-stream error/);
      assert.equal(metric(line, "error_isl").value, 10);
    }
    const valid = lines.filter((l) => l.error === null);
    for (const line of valid) {
      const meta = line.metadata as Json;
      assert.ok((meta.request_end_ns as number) > (meta.request_start_ns as number));
      assert.equal(meta.inferperf_level, 2);
      const ttft = metric(line, "time_to_first_token").value;
      assert.ok(ttft >= 39 && ttft < 2000, `TTFT ${ttft}`);
      assert.equal(metric(line, "input_sequence_length").value, 10);
      assert.equal(metric(line, "server_input_sequence_length").value, 13);
      assert.equal(metric(line, "output_sequence_length").value, 6);
      assert.equal(metric(line, "server_output_sequence_length").value, 6);
      assert.equal(metric(line, "client_output_sequence_length").value, 6);
      assert.equal(metric(line, "requested_output_sequence_length").value, 6);
      const gaps = (line.metrics as Record<string, { value: number[] }>).inter_chunk_latency.value;
      assert.equal(gaps.length, 5);
      const stats = (line.metrics as Record<string, { value: Json }>).inter_chunk_latency_stats;
      assert.equal(stats.value.count, 5);
      // ITL over 5 gaps of 10 ms: (latency - TTFT) / 5.
      const itl = metric(line, "inter_token_latency").value;
      const latency = metric(line, "request_latency").value;
      assert.ok(Math.abs(itl - (latency - ttft) / 5) < 1e-3, `ITL ${itl}`);
      assert.ok(itl > 0 && itl < 200, `ITL ${itl}`);
    }
    // Completion order numbers the lines.
    assert.deepEqual(lines.map((l) => (l.metadata as Json).session_num), [0, 1, 2, 3, 4, 5, 6, 7]);
  } finally {
    await server.close();
  }
});

Deno.test("request records: sessions' turns, and a KServe model's latencies", async () => {
  const server = await startServerInWorker({
    models: [
      { name: "llm", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 3 } },
      {
        name: "ident",
        kind: "identity",
        inputs: [{ name: "IN", datatype: "FP32", dims: [4] }],
        outputs: [{ name: "OUT", datatype: "FP32", dims: [4] }],
      },
    ],
  });
  try {
    const { lines, code } = await records([
      ...["-m", "llm", "--service-kind", "openai", "--endpoint-type", "chat", "-u", server.addr],
      ...["--conversation-num", "2", "--conversation-turn-mean", "2", "--session-concurrency", "1"],
      ...["--synthetic-input-tokens-mean", "4"],
    ]);
    assert.equal(code, 0);
    const turns = lines.map((l) => {
      const meta = l.metadata as Json;
      return `${meta.conversation_id}:${meta.turn_index}`;
    });
    assert.equal(turns.length, 4);
    assert.deepEqual(turns.map((t) => t.split(":")[1]), ["0", "1", "0", "1"]);
    assert.equal(new Set(turns.map((t) => t.split(":")[0])).size, 2);
    const kserve = await records(["-m", "ident", "-u", server.addr, "--request-count", "5"]);
    assert.equal(kserve.code, 0);
    assert.equal(kserve.lines.length, 5);
    for (const line of kserve.lines) {
      assert.deepEqual(Object.keys(line.metrics as Json), ["request_latency"]);
    }
  } finally {
    await server.close();
  }
});
