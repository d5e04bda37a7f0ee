import assert from "node:assert/strict";
import { encodeBytesElements } from "../input/codec.ts";
import { LatencyHistogram } from "../measure/histogram.ts";
import { Recorder } from "../measure/recorder.ts";
import type { InferenceClient, InferOptions, PreparedRequest } from "../protocol/types.ts";
import type { RequestTiming } from "../types/timing.ts";
import type { Tensor } from "../types/tensor.ts";
import {
  doubleJson,
  experimentJson,
  exportTargetProblem,
  parseProfileExport,
  ProfileExportWriter,
  tensorValueJson,
  wallClockNs,
} from "./export.ts";

const HEADER = { version: "0.1.0", serviceKind: "triton", endpoint: "" };

const f32 = (name: string, values: number[]): Tensor => ({
  name,
  datatype: "FP32",
  shape: [values.length],
  data: new Uint8Array(Float32Array.from(values).buffer),
});

const bytes = (name: string, values: string[]): Tensor => ({
  name,
  datatype: "BYTES",
  shape: [values.length],
  data: encodeBytesElements(values),
});

/** A client whose requests take `latencyMs` on a fake clock and echo "OUT" = first input element x 2. */
function fakeClient(clock: { now: number }): InferenceClient & { statsCalls: number } {
  return {
    protocol: "http",
    statsCalls: 0,
    serverInfo: () => Promise.resolve({ name: "fake", version: "1", extensions: [] }),
    modelInfo: () => Promise.reject(new Error("not needed")),
    prepare: (request) => ({ byteLength: request.inputs.length }),
    openSession: () =>
      Promise.resolve({
        infer(request: PreparedRequest, timing: RequestTiming, options?: InferOptions) {
          timing.start = clock.now;
          timing.sendEnd = timing.recvStart = clock.now + 0.5;
          timing.end = clock.now += 2.5;
          timing.responses = 1;
          if (request.byteLength === 0) return Promise.reject(new Error("Server returned 500"));
          return Promise.resolve(options?.decodeOutputs ? [f32("OUT", [3])] : undefined);
        },
        close() {},
      }),
    close: () => Promise.resolve(),
  };
}

Deno.test("numbers are written as perf_analyzer's rapidjson writes them", () => {
  assert.deepEqual(
    [8, 12.5, 0.000001, 1e-7, 1e20, 1e21, -0].map(doubleJson),
    ["8.0", "12.5", "0.000001", "1e-7", "100000000000000000000.0", "1e21", "-0.0"],
  );
  assert.equal(experimentJson("concurrency", 4), '{"mode":"concurrency","value":4}');
  assert.equal(experimentJson("request_rate", 8), '{"mode":"request_rate","value":8.0}');
  assert.equal(experimentJson("custom_intervals", 2.5), '{"mode":"request_rate","value":2.5}');
});

Deno.test("tensor values are written as perf_analyzer writes them", () => {
  assert.equal(tensorValueJson(f32("x", [1.5])), "1.5");
  assert.equal(tensorValueJson(f32("x", [1, 0.1])), "[1.0,0.10000000149011612]", "doubles");
  assert.equal(tensorValueJson(f32("x", [1, NaN, Infinity])), '[1.0,"NaN","Infinity"]');
  assert.equal(tensorValueJson(f32("x", [])), '""');
  assert.equal(tensorValueJson(bytes("s", ['say "hi"'])), '"say \\"hi\\""');
  assert.equal(tensorValueJson(bytes("s", ["a", "b"])), '["a","b"]');
  const int64: Tensor = {
    name: "i",
    datatype: "INT64",
    shape: [2],
    data: new Uint8Array(BigInt64Array.from([2n ** 60n, -3n]).buffer),
  };
  assert.equal(tensorValueJson(int64), "[1152921504606846976,-3]");
  assert.equal(tensorValueJson({ ...int64, data: new Uint8Array(3) }), "null");
});

Deno.test("an export round-trips: experiments, requests, outputs, errors, windows", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/profile.json`;
    const writer = new ProfileExportWriter(path);
    const clock = { now: 10 };
    const client = writer.wrapClient(fakeClient(clock));
    assert.equal(client.statsCalls, 0, "other members pass through");
    const target = { model: "m", version: "" };
    const plain = client.prepare({ inputs: [f32("IN", [1, 2])], outputs: [] }, target);
    const sequenced = client.prepare({
      inputs: [bytes("TEXT", ["hello"])],
      outputs: [],
      parameters: { sequence_id: 7, sequence_start: true },
    }, target);
    const failing = client.prepare({ inputs: [], outputs: [] }, target);
    const session = await client.openSession();
    const recorder = new Recorder({ sink: writer });
    const timing = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const send = async (request: PreparedRequest, intendedMs?: number) => {
      try {
        await session.infer(request, timing);
        recorder.record(timing, intendedMs);
      } catch (error) {
        recorder.recordError((error as Error).message, timing);
      }
    };

    await send(plain);
    writer.beginExperiment("concurrency", 2);
    await send(plain);
    recorder.rotate(); // the warmup ends: no window counts its request
    await send(plain);
    await send(sequenced);
    writer.flush();
    await send(failing);
    recorder.recordError("Cannot connect");
    const measured = recorder.rotate();
    const empty = recorder.rotate();
    await send(plain); // after the last window
    writer.addWindow(measured);
    writer.addWindow(empty);
    writer.beginExperiment("request_rate", 12.5);
    recorder.rotate();
    await send(plain, 19.5);
    writer.addWindow(recorder.rotate());
    writer.beginExperiment("request_rate", 8);
    assert.throws(() => Deno.statSync(path), Deno.errors.NotFound, "renamed only when done");
    writer.finish(HEADER);
    writer.finish(HEADER);
    await send(plain);

    const text = await Deno.readTextFile(path);
    assert.match(text, /"experiment":\{"mode":"request_rate","value":8\.0\}/, "a rate is a double");
    const exported = parseProfileExport(text);
    assert.equal(exported.version, "0.1.0");
    assert.equal(exported.service_kind, "triton");
    assert.equal(exported.endpoint, "");
    assert.equal(exported.experiments.length, 3);
    const [first, second] = exported.experiments;
    assert.deepEqual(first.experiment, { mode: "concurrency", value: 2 });
    assert.deepEqual(first.window_boundaries, [
      wallClockNs(measured.startMs),
      wallClockNs(measured.endMs),
      wallClockNs(empty.endMs),
    ]);
    assert.equal(first.window_latency_histograms!.length, 2);
    assert.equal(LatencyHistogram.decode(first.window_latency_histograms![0]).count, 2);
    assert.equal(first.requests.length, 2, "only the requests the windows counted");
    assert.deepEqual(first.requests[0], {
      timestamp: wallClockNs(15),
      request_inputs: { IN: [1.0, 2.0] },
      response_timestamps: [wallClockNs(17.5)],
      response_outputs: [{ OUT: 3 }],
    });
    assert.equal(
      first.requests[0].response_timestamps[0] - first.requests[0].timestamp,
      2_500_000n,
    );
    assert.deepEqual(first.requests[1], {
      timestamp: wallClockNs(17.5),
      sequence_id: 7,
      request_inputs: { TEXT: "hello" },
      response_timestamps: [wallClockNs(20)],
      response_outputs: [{ OUT: 3 }],
    });
    assert.deepEqual(first.failed_requests![0], {
      timestamp: wallClockNs(20),
      request_inputs: {},
      error: "Server returned 500",
    });
    assert.equal(first.failed_requests![1].error, "Cannot connect");
    assert.deepEqual(first.failed_requests![1].request_inputs, {});
    assert.deepEqual(second.experiment, { mode: "request_rate", value: 12.5 });
    assert.equal(second.window_boundaries.length, 2);
    assert.equal(second.requests[0].intended_timestamp, wallClockNs(19.5));
    assert.equal(second.requests.length, 1, "requests after finish() are not written");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["profile.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no file is written when no experiment started", async () => {
  const dir = await Deno.makeTempDir();
  try {
    new ProfileExportWriter(`${dir}/none.json`).finish(HEADER);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an existing export file is refused unless overwriting", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/exists.json`;
    assert.equal(exportTargetProblem(path, false), undefined);
    await Deno.writeTextFile(path, "{}");
    assert.match(exportTargetProblem(path, false)!, /already exists.*--overwrite/);
    assert.equal(exportTargetProblem(path, true), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("failed requests carry their send time and inputs; each response gets a timestamp", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/profile.json`;
    const writer = new ProfileExportWriter(path);
    const clock = { now: 100 };
    const inner: InferenceClient = {
      ...fakeClient(clock),
      openSession: () =>
        Promise.resolve({
          infer(request: PreparedRequest, timing: RequestTiming, options?: InferOptions) {
            // byteLength 0: refused before anything is sent (the client never sets `start`).
            if (request.byteLength === 0) return Promise.reject(new Error("Connection reset"));
            timing.start = clock.now;
            timing.sendEnd = timing.recvStart = clock.now + 1;
            // byteLength 2: three streamed responses 2 ms apart; byteLength 3 fails after sending.
            for (let i = 0; i < (request.byteLength === 2 ? 3 : 0); i++) {
              clock.now += 2;
              options?.onResponse?.();
            }
            timing.end = clock.now += 1;
            timing.responses = request.byteLength === 2 ? 3 : 1;
            if (request.byteLength === 3) return Promise.reject(new Error("Server returned 500"));
            return Promise.resolve(options?.decodeOutputs ? [f32("OUT", [7])] : undefined);
          },
          close() {},
        }),
    };
    const client = writer.wrapClient(inner);
    const target = { model: "m", version: "" };
    const streamed = client.prepare(
      { inputs: [f32("A", [1]), f32("B", [2])], outputs: [] },
      target,
    );
    const failing = client.prepare({
      inputs: [f32("A", [1]), f32("B", [2]), f32("C", [3])],
      outputs: [],
    }, target);
    const refused = client.prepare({ inputs: [], outputs: [] }, target);
    const session = await client.openSession();
    const recorder = new Recorder({ sink: writer });
    const timing = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    let seen = 0;
    writer.beginExperiment("concurrency", 1);

    const streamedFrom = performance.now();
    const outputs = await session.infer(streamed, timing, { onResponse: () => seen++ });
    const streamedTo = performance.now();
    recorder.record(timing);
    assert.equal(seen, 3, "the load's own callback is chained");
    assert.deepEqual(outputs, [f32("OUT", [7])]);
    await assert.rejects(session.infer(failing, timing));
    recorder.recordError("Server returned 500", timing);
    const before = performance.now();
    await assert.rejects(session.infer(refused, timing));
    recorder.recordError("Connection reset", timing);
    const after = performance.now();
    writer.addWindow(recorder.rotate());
    writer.finish(HEADER);

    const [experiment] = parseProfileExport(await Deno.readTextFile(path)).experiments;
    const [sent] = experiment.requests;
    const [failed, unsent] = experiment.failed_requests!;
    // Each response is stamped on arrival (the real clock, not the fake one of `timing`).
    assert.equal(sent.response_timestamps.length, 3);
    const [first, second, third] = sent.response_timestamps;
    assert.ok(wallClockNs(streamedFrom) <= first && first <= second && second <= third);
    assert.ok(third <= wallClockNs(streamedTo));
    assert.deepEqual(sent.response_outputs, [{}, {}, { OUT: 7 }]);
    assert.deepEqual(failed, {
      timestamp: wallClockNs(107),
      request_inputs: { A: 1, B: 2, C: 3 },
      error: "Server returned 500",
    });
    // The stale `start` of the previous request is not taken for this one's send.
    assert.ok(
      unsent.timestamp >= wallClockNs(before) && unsent.timestamp <= wallClockNs(after),
      "dated by the failure",
    );
    assert.deepEqual(unsent.request_inputs, {});
    assert.equal(unsent.error, "Connection reset");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run without measurement windows is one window from 0 to the largest time", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/profile.json`;
    const writer = new ProfileExportWriter(path);
    const recorder = new Recorder({ sink: writer });
    writer.beginExperiment("concurrency", 1, { wholeRun: true });
    recorder.rotate();
    writer.addWindow(recorder.rotate());
    writer.finish(HEADER);
    const text = await Deno.readTextFile(path);
    assert.match(text, /"experiment":\{"mode":"concurrency","value":1\}/);
    assert.match(text, /"window_boundaries":\[0,18446744073709551615\]/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("windows larger than a flush writes are written whole, in order, between others", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/profile.json`;
    const writer = new ProfileExportWriter(path);
    const clock = { now: 0 };
    const client = writer.wrapClient(fakeClient(clock));
    const target = { model: "m", version: "" };
    // ~1.2 KB of inputs per record: a window of 400 is several flushes' worth.
    const prepared = [1, 2, 3].map((v) =>
      client.prepare({ inputs: [f32("IN", new Array(200).fill(v + 0.5))], outputs: [] }, target)
    );
    const session = await client.openSession();
    const recorder = new Recorder({ sink: writer });
    const timing = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const expected: { startMs: number; input: number }[] = [];
    const sendMany = async (count: number, options: { counted: boolean }) => {
      for (let i = 0; i < count; i++) {
        // Runs of the same request, so that records share their inputs and then change them.
        const which = Math.floor(i / 7) % 3;
        if (options.counted) expected.push({ startMs: clock.now, input: which + 1.5 });
        await session.infer(prepared[which], timing);
        recorder.record(timing);
        if (i % 150 === 0) writer.flush();
      }
    };

    writer.beginExperiment("request_rate", 5000);
    await sendMany(20, { counted: false });
    recorder.rotate(); // warmup
    await sendMany(400, { counted: true });
    writer.addWindow(recorder.rotate());
    writer.flush(); // the first window is still being written...
    await sendMany(400, { counted: true }); // ...as the second fills
    const second = recorder.rotate();
    await sendMany(30, { counted: false });
    recorder.rotate(); // no window ends here
    writer.addWindow(second);
    await sendMany(400, { counted: true });
    writer.addWindow(recorder.rotate());
    await sendMany(10, { counted: false }); // after the last window
    writer.beginExperiment("request_rate", 6000);
    recorder.rotate();
    await sendMany(5, { counted: true });
    writer.addWindow(recorder.rotate());
    writer.finish(HEADER);

    const exported = parseProfileExport(await Deno.readTextFile(path));
    const requests = exported.experiments.flatMap((e) => e.requests);
    assert.deepEqual(exported.experiments.map((e) => e.requests.length), [1200, 5]);
    assert.deepEqual(
      requests.map((r) => [r.timestamp, r.request_inputs.IN, r.response_outputs]),
      expected.map((e) => [
        wallClockNs(e.startMs),
        new Array(200).fill(e.input),
        [{ OUT: 3 }],
      ]),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
