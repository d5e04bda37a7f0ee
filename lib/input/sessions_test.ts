import assert from "node:assert/strict";
import { decodeBytesElements } from "./codec.ts";
import { InputError } from "./errors.ts";
import { loadLlmData } from "./llm_data.ts";
import { sessionsOf } from "./sessions.ts";

const SYNTHETIC = { inputTokensMean: 1, inputTokensStddev: 0, count: 1, streaming: false, seed: 0 };
const chat = (content: string) => ({ messages: [{ role: "user", content }] });

/** The data set of an OpenAI input-data file holding `data`. */
async function load(data: unknown[]) {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(path, JSON.stringify({ data }));
    return await loadLlmData({
      model: "m",
      endpointType: "chat",
      paths: [path],
      synthetic: SYNTHETIC,
    });
  } finally {
    await Deno.remove(path);
  }
}

Deno.test("OpenAI input data: timestamp, session_id and delay beside the payload, as genai-perf writes them", async () => {
  const data = await load([
    { payload: [chat("a")], timestamp: [0], session_id: ["s1"], delay: [50] },
    { payload: [chat("b")], timestamp: 20, session_id: 7 },
    { payload: [chat("c")] },
  ]);
  const [a, b, c] = data.streams[0];
  assert.deepEqual([a.timestampMs, a.sessionId, a.delayMs], [0, "s1", 50]);
  assert.deepEqual([b.timestampMs, b.sessionId, b.delayMs], [20, "7", undefined]);
  assert.deepEqual([c.timestampMs, c.sessionId, c.delayMs], [undefined, undefined, undefined]);
  const rejected = async (entry: unknown, message: RegExp) =>
    await assert.rejects(
      () => load([entry]),
      (e) => e instanceof InputError && message.test(e.message),
    );
  await rejected(
    { payload: [chat("a")], delay: [-1] },
    /data\[0\]: "delay" must be whole milliseconds >= 0, got \[-1\]/,
  );
  await rejected({ payload: [chat("a")], session_id: [""] }, /"session_id" must be a string/);
  await rejected(
    { payload: [chat("a")], timestamp: "soon" },
    /"timestamp" must be milliseconds >= 0/,
  );
  await rejected(
    { payload: [chat("a")], priority: 1 },
    /beside it only "timestamp", "session_id" and "delay"/,
  );
});

Deno.test("sessions: turns grouped by session_id in file order, each with its metadata", async () => {
  const data = await load([
    { payload: [chat("a1")], session_id: ["a"], delay: [10] },
    { payload: [chat("b1")], session_id: ["b"], delay: [20] },
    { payload: [chat("a2")], session_id: ["a"] },
    { payload: [chat("b2")], session_id: ["b"], delay: [30] },
    { payload: [chat("b3")], session_id: ["b"] },
  ]);
  const sessions = sessionsOf(data, 2);
  assert.deepEqual(
    sessions.map((turns) => turns.map((t) => [t.body.messages, t.delayMs])),
    [
      [[chat("a1").messages, 10], [chat("a2").messages, undefined]],
      [[chat("b1").messages, 20], [chat("b2").messages, 30], [chat("b3").messages, undefined]],
    ],
  );
  // The model -m names is in the body; session_id and delay are the inputs perf_analyzer exports.
  assert.equal(sessions[0][0].body.model, "m");
  const [id, delay] = sessions[1][1].metadata;
  assert.deepEqual([
    id.name,
    id.datatype,
    new TextDecoder().decode(decodeBytesElements(id.data)[0]),
  ], [
    "session_id",
    "BYTES",
    "b",
  ]);
  assert.deepEqual([
    delay.name,
    delay.datatype,
    new DataView(delay.data.buffer).getBigUint64(0, true),
  ], [
    "delay",
    "UINT64",
    30n,
  ]);
  assert.equal(sessions[0][1].metadata.length, 1);
});

Deno.test("sessions: what perf_analyzer refuses is an InputError naming the step", async () => {
  const refused = async (data: unknown[], concurrency: number, message: RegExp) => {
    const set = await load(data);
    assert.throws(
      () => sessionsOf(set, concurrency),
      (e) => e instanceof InputError && message.test(e.message),
    );
  };
  await refused([{ payload: [chat("a")] }], 1, /data\[0\]: no "session_id"/);
  await refused(
    [{ payload: [chat("a")], session_id: ["a"] }, { payload: [chat("b")], session_id: ["a"] }],
    1,
    /data\[0\]: no "delay": every turn of a session but its last/,
  );
  await refused(
    [{ payload: [chat("a")], session_id: ["a"] }],
    2,
    /holds 1 sessions \(distinct "session_id" values\), fewer than --session-concurrency 2/,
  );
  await refused(
    [{ payload: [{ prompt: "a" }], session_id: ["a"] }],
    1,
    /data\[0\]: --session-concurrency sends chat requests: the body needs a "messages" array/,
  );
});
