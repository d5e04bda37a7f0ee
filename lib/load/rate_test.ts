import assert from "node:assert/strict";
import { Recorder } from "../measure/recorder.ts";
import type { InferenceClient } from "../protocol/types.ts";
import type { InferRequest } from "../types/tensor.ts";
import { RoundRobinFeed } from "./feed.ts";
import { RateLoad } from "./rate.ts";
import { constantSchedule } from "./schedule.ts";
import { SequenceFeed } from "./sequences.ts";
import { FakeClient, type FakeRequest } from "./testdata/fake_client.ts";

function rateLoad(fake: FakeClient, options: { maxInflight: number; feed?: SequenceFeed }) {
  const client = fake as unknown as InferenceClient;
  return new RateLoad(client, {
    feed: options.feed ?? new RoundRobinFeed([fake.prepare({ inputs: [], outputs: [] })]),
    maxInflight: options.maxInflight,
  });
}

Deno.test("sends leave on schedule without waiting for responses", async () => {
  const fake = new FakeClient(30);
  const load = rateLoad(fake, { maxInflight: 100 });
  const recorder = new Recorder();
  load.start(constantSchedule(500), { recorder, limit: 40 });
  await load.drained();
  await load.stop();
  const w = recorder.rotate();
  assert.equal(w.sendCount, 40);
  assert.equal(w.latenciesUs.length, 40);
  assert.equal(w.correctedLatenciesUs.length, 40);
  assert.equal(w.blockedCount, 0);
  // 30 ms answers at one send per 2 ms: about 15 in flight, one session each and one spare.
  assert.ok(fake.maxInflight >= 10, `${fake.maxInflight} in flight at most`);
  assert.equal(fake.sessions, fake.maxInflight + 1);
  load.close();
});

Deno.test("the in-flight limit holds sends back, counts them and shows in corrected latency", async () => {
  const fake = new FakeClient(20);
  const load = rateLoad(fake, { maxInflight: 2 });
  const recorder = new Recorder();
  load.start(constantSchedule(500), { recorder, limit: 20 });
  await load.drained();
  await load.stop();
  const w = recorder.rotate();
  assert.equal(fake.maxInflight, 2);
  assert.equal(fake.sessions, 2);
  assert.equal(w.sendCount, 20);
  assert.ok(w.blockedCount >= 15, `${w.blockedCount} blocked`);
  const worstCorrected = Math.max(...w.correctedLatenciesUs);
  const worstService = Math.max(...w.latenciesUs);
  // The held sends waited for capacity: only the latency from the intended time shows it.
  assert.ok(worstCorrected > 3 * worstService, `${worstCorrected} vs ${worstService} us`);
  assert.ok(w.delayedCount >= 15);
  load.close();
});

Deno.test("sequence lanes carry start, middle and end flags with their own ids", async () => {
  const fake = new FakeClient(1);
  const feed = new SequenceFeed([[{ inputs: [], outputs: [] }]], (r) => fake.prepare(r), {
    count: 2,
    length: 3,
    variationPct: 0,
    idRange: { start: 10, end: 20 },
    rng: Math.random,
  });
  const load = rateLoad(fake, { maxInflight: 10, feed });
  load.start(constantSchedule(1000), { recorder: new Recorder(), limit: 6 });
  await load.drained();
  await load.stop();
  const steps = fake.sent.map((r) => r.parameters);
  assert.deepEqual(steps, [
    { sequence_id: 10, sequence_start: true, sequence_end: false },
    { sequence_id: 11, sequence_start: true, sequence_end: false },
    { sequence_id: 10, sequence_start: false, sequence_end: false },
    { sequence_id: 11, sequence_start: false, sequence_end: false },
    { sequence_id: 10, sequence_start: false, sequence_end: true },
    { sequence_id: 11, sequence_start: false, sequence_end: true },
  ]);
  load.close();
});

Deno.test("a stopped load ends each sequence under way with one END request", async () => {
  const fake = new FakeClient(1);
  const feed = new SequenceFeed([[{ inputs: [], outputs: [] }]], (r) => fake.prepare(r), {
    count: 2,
    length: 5,
    variationPct: 0,
    idRange: { start: 10, end: 20 },
    rng: Math.random,
  });
  const load = rateLoad(fake, { maxInflight: 10, feed });
  const recorder = new Recorder();
  load.start(constantSchedule(1000), { recorder, limit: 4 });
  await load.drained();
  await load.stop();
  // Two of five steps sent on each lane; the stop sends each sequence's last.
  assert.deepEqual(fake.sent.slice(4).map((r) => r.parameters), [
    { sequence_id: 10, sequence_start: false, sequence_end: true },
    { sequence_id: 11, sequence_start: false, sequence_end: true },
  ]);
  assert.equal(recorder.rotate().latenciesUs.length, 6, "recorded after the level's windows");
  // The next level starts new sequences.
  load.start(constantSchedule(1000), { recorder, limit: 2 });
  await load.drained();
  assert.deepEqual(fake.sent.slice(6).map((r) => r.parameters), [
    { sequence_id: 12, sequence_start: true, sequence_end: false },
    { sequence_id: 13, sequence_start: true, sequence_end: false },
  ]);
  await load.stop();
  assert.equal(fake.sent.length, 10);
  load.close();
});

Deno.test("sequence ids wrap around the range but skip live ones", () => {
  const prepare = (r: InferRequest) => ({ byteLength: 0, parameters: r.parameters }) as FakeRequest;
  const feed = new SequenceFeed([[{ inputs: [], outputs: [] }]], prepare, {
    count: 2,
    length: 2,
    variationPct: 0,
    idRange: { start: 1, end: 3 },
    rng: Math.random,
  });
  const id = (lane: number) => (feed.next(lane) as FakeRequest).parameters!.sequence_id;
  // Lane 0 runs short sequences while lane 1's first sequence (id 2) stays live.
  assert.deepEqual([id(0), id(1), id(0), id(0), id(0), id(0)], [1, 2, 1, 3, 3, 1]);
  assert.throws(() => {
    const tiny = new SequenceFeed([[{ inputs: [], outputs: [] }]], prepare, {
      count: 2,
      length: 5,
      variationPct: 0,
      idRange: { start: 1, end: 1 },
      rng: Math.random,
    });
    tiny.next(0);
    tiny.next(1);
  }, /No free sequence id in --sequence-id-range 1:1/);
});

Deno.test("serial sequences keep one request per sequence in flight", async () => {
  const fake = new FakeClient(10);
  const feed = new SequenceFeed([[{ inputs: [], outputs: [] }]], (r) => fake.prepare(r), {
    count: 2,
    length: 4,
    variationPct: 0,
    idRange: { start: 1, end: 100 },
    rng: Math.random,
  });
  const load = new RateLoad(fake as unknown as InferenceClient, {
    feed,
    maxInflight: 50,
    serialSequences: true,
  });
  const recorder = new Recorder();
  load.start(constantSchedule(1000), { recorder, limit: 8 });
  await load.drained();
  await load.stop();
  assert.equal(fake.maxInflight, 2);
  assert.equal(fake.sent.length, 8);
  assert.ok(recorder.rotate().blockedCount >= 4);
  load.close();
});

Deno.test("each prepared request of a sequence keeps the output check of its input-data step", () => {
  const prepare = (r: InferRequest) => ({ byteLength: 0, parameters: r.parameters }) as FakeRequest;
  const [a0, a1, b0] = [() => undefined, () => "mismatch", () => undefined];
  const feed = new SequenceFeed(
    [[{ inputs: [], outputs: [] }, { inputs: [], outputs: [] }], [{ inputs: [], outputs: [] }]],
    prepare,
    {
      count: 1,
      length: 1,
      variationPct: 0,
      idRange: { start: 1, end: 100 },
      rng: Math.random,
      checks: [[a0, a1], [b0]],
    },
  );
  // Streams are played one per sequence, each sequence with fresh preparations.
  const sent = Array.from({ length: 6 }, () => feed.next(0));
  assert.deepEqual(sent.map((r) => feed.check(r)), [a0, a1, b0, a0, a1, b0]);
  assert.notEqual(sent[0], sent[3]);
  assert.throws(
    () =>
      new SequenceFeed([[{ inputs: [], outputs: [] }]], prepare, {
        count: 1,
        length: 1,
        variationPct: 0,
        idRange: { start: 1, end: 100 },
        rng: Math.random,
        checks: [[a0, a1]],
      }),
    /The checks must align with the streams' requests/,
  );
});

Deno.test("connections open ahead of the sends that use them", async () => {
  // Slow connects and answers that outlast the gap between sends: each new connection is a spare
  // opened before it is needed, so no send waits for one (send lag stays far below 40 ms).
  const fake = new FakeClient(70);
  fake.connect.ms = 40;
  const load = rateLoad(fake, { maxInflight: 100 });
  const recorder = new Recorder();
  await load.prepare();
  assert.equal(fake.sessions, 1);
  load.start(constantSchedule(20), { recorder, limit: 6 });
  await load.drained();
  await load.stop();
  const w = recorder.rotate();
  assert.equal(w.sendCount, 6);
  assert.ok(Math.max(...w.sendLagsUs) < 20_000, `send lags ${[...w.sendLagsUs]} usec`);
  load.close();
});

Deno.test("a spare that cannot connect is dropped and the sends report the failure", async () => {
  const fake = new FakeClient(1);
  fake.connect.failing = true;
  const load = rateLoad(fake, { maxInflight: 2 });
  const recorder = new Recorder();
  await load.prepare();
  load.start(constantSchedule(200), { recorder, limit: 5 });
  await load.drained();
  await load.stop();
  const w = recorder.rotate();
  assert.equal(w.sendCount, 5);
  assert.equal(w.errorCount, 5);
  assert.deepEqual([...w.errors], [["connection refused", 5]]);
  load.close();
});
