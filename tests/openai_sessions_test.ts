/**
 * genai-perf's two load modes over OpenAI input data, end to end against the
 * reference server: --session-concurrency (multi-turn chat sessions, each
 * turn carrying the history, after the previous answer and its delay) and
 * --fixed-schedule with a "timestamp" beside each payload. Both export one
 * experiment filed as request rate 0, as perf_analyzer does.
 */
import assert from "node:assert/strict";
import { type ExportedRequest, parseProfileExport } from "../lib/report/export.ts";
import { startServerInWorker } from "../lib/server/mod.ts";
import { runCli } from "./_helpers.ts";

const MODELS = [{ name: "chat", llm: { ttft_ms: 20, itl_ms: 5, output_tokens: 4 } }];
const chat = (content: string) => [{ model: "chat", messages: [{ role: "user", content }] }];

/** Runs inferperf with `data` as its input data; the export and stdout. */
async function run(data: unknown[], args: string[]) {
  const server = await startServerInWorker({ models: MODELS });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/in.json`, JSON.stringify({ data }));
    const r = await runCli([
      ...["-m", "chat", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
      ...["-u", server.addr, "--input-data", `${dir}/in.json`],
      ...["--profile-export-file", `${dir}/export.json`, ...args],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    return {
      stdout: r.stdout,
      exported: parseProfileExport(await Deno.readTextFile(`${dir}/export.json`)),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
}

const ms = (ns: bigint) => Number(ns) / 1e6;
const end = (r: ExportedRequest) => ms(r.response_timestamps[r.response_timestamps.length - 1]);

Deno.test("--session-concurrency: turns in order with their history, after each delay, N sessions at a time", async () => {
  const { stdout, exported } = await run([
    { payload: chat("a1"), session_id: ["A"], delay: [100] },
    { payload: chat("b1"), session_id: ["B"], delay: [150] },
    { payload: chat("a2"), session_id: ["A"], delay: [100] },
    { payload: chat("c1"), session_id: ["C"] },
    { payload: chat("a3"), session_id: ["A"] },
    { payload: chat("b2"), session_id: ["B"] },
  ], ["--session-concurrency", "2"]);
  assert.match(stdout, /Running 2 sessions at a time/);
  assert.match(stdout, /Session concurrency: 2\n {2}Client: \n {4}Request count: 6\n/);
  assert.equal(exported.experiments.length, 1);
  const [experiment] = exported.experiments;
  assert.deepEqual(experiment.experiment, { mode: "request_rate", value: 0 });
  const sessions = new Map<string, ExportedRequest[]>();
  assert.deepEqual(experiment.failed_requests, []);
  for (const request of experiment.requests) {
    const id = request.request_inputs.session_id as string;
    sessions.set(id, [...sessions.get(id) ?? [], request]);
  }
  assert.deepEqual([...sessions.keys()].sort(), ["A", "B", "C"]);
  for (const [id, requests] of sessions) {
    requests.sort((x, y) => Number(x.timestamp - y.timestamp));
    requests.forEach((request, turn) => {
      const body = JSON.parse(request.request_inputs.payload as string);
      // Every earlier turn's message, each followed by the answer it got, then this turn's.
      assert.deepEqual(
        body.messages.map((m: { role: string; content: string }) =>
          m.role === "user" ? m.content : m.role
        ),
        Array.from({ length: turn + 1 }, (_, i) => [`${id.toLowerCase()}${i + 1}`, "assistant"])
          .flat().slice(0, -1),
      );
      if (turn === 0) return;
      const delay = requests[turn - 1].request_inputs.delay as number;
      assert.equal(delay, id === "A" ? 100 : 150);
      // Sent after the previous answer and its delay (timer slack aside).
      const gap = ms(request.timestamp) - end(requests[turn - 1]);
      assert.ok(gap >= delay - 1, `session ${id} turn ${turn + 1}: ${gap} ms after the answer`);
    });
    assert.equal(requests.at(-1)!.request_inputs.delay, undefined);
  }
  // Two lanes: A and B start at once, C only once one of them has ended.
  const span = (id: string) => {
    const requests = sessions.get(id)!;
    return { start: ms(requests[0].timestamp), end: end(requests.at(-1)!) };
  };
  const [a, b, c] = ["A", "B", "C"].map(span);
  assert.ok(Math.abs(a.start - b.start) < 50, `A at ${a.start}, B at ${b.start}`);
  assert.ok(c.start >= Math.min(a.end, b.end), "C started while A and B were in flight");
});

Deno.test("--fixed-schedule: OpenAI input data sent at each entry's timestamp", async () => {
  const timestamps = [0, 100, 150, 300];
  const { exported } = await run(
    timestamps.map((t, i) => ({ payload: chat(`m${i}`), timestamp: [t] })),
    // The lag of a loaded test machine is not what this test is about.
    ["--fixed-schedule", "--ignore-send-lag"],
  );
  const [experiment] = exported.experiments;
  assert.deepEqual(experiment.experiment, { mode: "request_rate", value: 0 });
  const requests = [...experiment.requests].sort((x, y) =>
    Number(x.intended_timestamp! - y.intended_timestamp!)
  );
  assert.equal(requests.length, timestamps.length);
  const first = ms(requests[0].intended_timestamp!);
  requests.forEach((request, i) => {
    assert.ok(Math.abs(ms(request.intended_timestamp!) - first - timestamps[i]) < 0.01);
    assert.ok(request.timestamp >= request.intended_timestamp!, "sent before it was due");
    // The timestamp is the schedule's, not an input of the request.
    assert.deepEqual(Object.keys(request.request_inputs), ["payload"]);
    assert.equal(JSON.parse(request.request_inputs.payload as string).messages[0].content, `m${i}`);
  });
});
