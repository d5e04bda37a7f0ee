import assert from "node:assert/strict";
import type { RequestRecorder } from "../../measure/recorder.ts";
import type { TokenTiming } from "../../types/timing.ts";
import type { RequestTiming } from "../../types/timing.ts";
import type { SeenRequest } from "../../report/export.ts";
import type { Tensor } from "../../types/tensor.ts";
import { RecordBatch, RemoteRequests, replay } from "./records.ts";

/** Notes every call as the Recorder would receive it. */
function noting(calls: unknown[]): RequestRecorder {
  return {
    record: (t, intended) => calls.push(["record", { ...t }, intended]),
    recordSend: (intended, dispatched, blocked) =>
      calls.push(["send", intended, dispatched, blocked]),
    recordError: (message, t) => calls.push(["error", message, t && { ...t }]),
    recordCancelled: () => calls.push(["cancelled"]),
    lastCompletedMs: -Infinity,
  };
}

Deno.test("records replay in order, on the main thread's clock", () => {
  const timing: RequestTiming = { start: 10, sendEnd: 11, recvStart: 15, end: 16, responses: 1 };
  const tokens: TokenTiming = {
    ...timing,
    firstResponse: 12,
    secondResponse: 13,
    lastResponse: 14,
    responses: 3,
    outputTokens: 3,
    inputTokens: -1,
    serverInputTokens: 30,
    reasoningChunks: 1,
    reasoningUsage: -1,
    cachedTokens: 24,
    requestedTokens: 3,
    usage: false,
  };
  const batch = new RecordBatch(() => assert.fail("not full"));
  batch.recordSend(9, 9.5, true);
  batch.record(timing, 9);
  batch.record(tokens);
  batch.recordError("refused");
  batch.recordError("HTTP 500", timing);
  batch.recordError("refused", timing);
  batch.recordCancelled();
  const message = batch.take();
  assert.equal(batch.size, 0);
  const calls: unknown[] = [];
  replay(message, { recorder: noting(calls), offsetMs: 100 });
  const moved = { start: 110, sendEnd: 111, recvStart: 115, end: 116, responses: 1 };
  assert.deepEqual(calls, [
    ["send", 109, 109.5, true],
    ["record", { ...moved, firstResponse: undefined }, 109],
    ["record", {
      ...moved,
      firstResponse: 112,
      secondResponse: 113,
      lastResponse: 114,
      responses: 3,
      outputTokens: 3,
      inputTokens: -1,
      serverInputTokens: 30,
      reasoningChunks: 1,
      reasoningUsage: -1,
      cachedTokens: 24,
      requestedTokens: 3,
      usage: false,
    }, undefined],
    ["error", "refused", undefined],
    ["error", "HTTP 500", { ...moved, firstResponse: undefined }],
    ["error", "refused", { ...moved, firstResponse: undefined }],
    ["cancelled"],
  ]);
  assert.deepEqual(message.messages, ["refused", "HTTP 500"]);
});

Deno.test("a full batch asks to be taken", () => {
  let taken = 0;
  const batch: RecordBatch = new RecordBatch(() => {
    taken += batch.take().rows.length;
  });
  for (let i = 0; i < 5000; i++) batch.recordSend(i, i, false);
  assert.equal(taken, 4096 * 19);
  assert.equal(batch.size, 5000 - 4096);
});

Deno.test("outputs repeated from row to row cross once and arrive as one object", () => {
  const tensor = (byte: number): Tensor => ({
    name: "OUT",
    datatype: "UINT8",
    shape: [2],
    data: new Uint8Array([byte, byte]),
  });
  // What the client hands the export: the same object for a response with the same bytes.
  const a = [tensor(1)];
  const b = [tensor(2)];
  const sequence = [a, a, b, b, a];
  const timings = sequence.map((_, i): RequestTiming => ({
    start: i,
    sendEnd: i,
    recvStart: i,
    end: i + 1,
    responses: 1,
  }));
  const seen = new Map(timings.map((t, i): [RequestTiming, SeenRequest] => [t, {
    request: undefined,
    sent: true,
    responsesMs: [],
    outputs: sequence[i],
  }]));
  const batch = new RecordBatch(() => assert.fail("not full"), { seen: (t) => seen.get(t) });
  const received: (readonly Readonly<Tensor>[] | undefined)[] = [];
  const remote = new RemoteRequests({ noteRemote: (_t, s) => received.push(s.outputs) });
  const replayTaken = () => {
    const message = batch.take();
    replay(message, { recorder: noting([]), offsetMs: 0, remote });
    return message;
  };
  timings.slice(0, 4).forEach((t) => batch.record(t));
  assert.equal(replayTaken().seen!.bytes.length, 4, "a's and b's bytes, once each");
  // A new batch packs its first outputs again.
  batch.record(timings[4]);
  replayTaken();
  assert.deepEqual(received.map((o) => o?.[0].data[0]), [1, 1, 2, 2, 1]);
  assert.equal(received[0], received[1]);
  assert.equal(received[2], received[3]);
  assert.notEqual(received[1], received[2]);
  assert.notEqual(received[4], received[0]);
});

Deno.test("each response's outputs cross with its time, as the export writes them", () => {
  const text = (event: string): Tensor[] => [{
    name: "response",
    datatype: "BYTES",
    shape: [1],
    data: new TextEncoder().encode(event),
  }];
  const events = [text("data: {}\n\n"), text("data: [DONE]\n\n")];
  const timing: RequestTiming = { start: 1, sendEnd: 1, recvStart: 2, end: 4, responses: 1 };
  const batch = new RecordBatch(() => assert.fail("not full"), {
    seen: () => ({
      request: undefined,
      sent: true,
      responsesMs: [2, 3],
      outputs: undefined,
      responseOutputs: events,
    }),
  });
  const received: SeenRequest[] = [];
  const remote = new RemoteRequests({
    noteRemote: (_t, s) => received.push({ ...s, responsesMs: [...s.responsesMs] }),
  });
  batch.record(timing);
  batch.record(timing);
  replay(batch.take(), { recorder: noting([]), offsetMs: 10, remote });
  assert.equal(received.length, 2);
  for (const seen of received) {
    assert.deepEqual(seen.responsesMs, [12, 13]);
    assert.equal(seen.outputs, undefined);
    const decoded = seen.responseOutputs!.map((o) => new TextDecoder().decode(o[0].data));
    assert.deepEqual(decoded, ["data: {}\n\n", "data: [DONE]\n\n"]);
  }
});
