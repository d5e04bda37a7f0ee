import assert from "node:assert/strict";
import { Recorder } from "../measure/recorder.ts";
import type { InferenceClient } from "../protocol/types.ts";
import { ConcurrencyLoad, CONNECTION_BACKOFF_MS, connectionBackoffMs } from "./concurrency.ts";
import { SequenceFeed } from "./sequences.ts";
import { FakeClient } from "./testdata/fake_client.ts";

/** `count` sequences of one empty step, long enough never to end on their own. */
function sequenceFeed(fake: FakeClient, count: number): SequenceFeed {
  return new SequenceFeed([[{ inputs: [], outputs: [] }]], (r) => fake.prepare(r), {
    count,
    length: 1000,
    variationPct: 0,
    idRange: { start: 1, end: 100 },
    rng: Math.random,
  });
}

Deno.test("connection failures in a row back off exponentially, up to a bound", () => {
  assert.deepEqual([1, 2, 3, 4].map(connectionBackoffMs), [50, 100, 200, 400]);
  assert.equal(connectionBackoffMs(5), CONNECTION_BACKOFF_MS.max);
  assert.equal(connectionBackoffMs(1000), CONNECTION_BACKOFF_MS.max);
});

Deno.test("between levels every sequence under way ends; the next level starts new ones", async () => {
  const fake = new FakeClient(1);
  const feed = sequenceFeed(fake, 4);
  const load = new ConcurrencyLoad(fake as unknown as InferenceClient, { feed });
  const recorder = new Recorder();
  const flagsById = () => {
    const byId = new Map<number, Array<[boolean, boolean]>>();
    for (const { parameters: p } of fake.sent) {
      const id = p!.sequence_id as number;
      byId.set(id, [...byId.get(id) ?? [], [
        p!.sequence_start as boolean,
        p!.sequence_end as boolean,
      ]]);
    }
    return byId;
  };
  for (const concurrency of [3, 4]) {
    load.start(concurrency, { recorder });
    await new Promise((r) => setTimeout(r, 30));
    await load.stop();
  }
  load.close();
  const sequences = flagsById();
  // Three sequences at the first level, four new ones at the second: each START ... END.
  assert.deepEqual([...sequences.keys()], [1, 2, 3, 4, 5, 6, 7]);
  for (const [id, flags] of sequences) {
    assert.ok(flags.length >= 2, `sequence ${id}: ${flags.length} requests`);
    assert.deepEqual(flags[0], [true, false], `sequence ${id} starts`);
    assert.deepEqual(flags.at(-1), [false, true], `sequence ${id} ends`);
    assert.ok(flags.slice(1, -1).every(([s, e]) => !s && !e), `sequence ${id} in between`);
  }
});

Deno.test("at a stop, a lane ends its sequence right after its own answer, not after the slowest", async () => {
  // Sequence 2 answers in 200 ms, the others at once: were the ENDs sent after every answer, the
  // server would hold sequence 1 idle (and its slot) that long; Triton's idle timeout ends it,
  // and its END fails.
  const fake = new FakeClient((r) => r.parameters!.sequence_id === 2 ? 200 : 1);
  const feed = sequenceFeed(fake, 2);
  const load = new ConcurrencyLoad(fake as unknown as InferenceClient, { feed });
  load.start(2, { recorder: new Recorder() });
  await new Promise((r) => setTimeout(r, 20));
  const stopMs = performance.now();
  await load.stop();
  load.close();
  const endMs = (id: number) =>
    fake.sentMs[
      fake.sent.findIndex((r) => r.parameters!.sequence_id === id && r.parameters!.sequence_end)
    ];
  assert.ok(endMs(1) - stopMs < 100, `sequence 1 ended ${endMs(1) - stopMs} ms after the stop`);
  assert.ok(endMs(2) - stopMs >= 150, `sequence 2 ended ${endMs(2) - stopMs} ms after the stop`);
  assert.equal(fake.sent.filter((r) => r.parameters!.sequence_end).length, 2);
});

Deno.test("a lane a concurrency shape stops ends its sequence; a new one starts when it resumes", async () => {
  const fake = new FakeClient(2);
  const feed = sequenceFeed(fake, 2);
  const load = new ConcurrencyLoad(fake as unknown as InferenceClient, { feed });
  const steps = { initial: 2, steps: [{ atMs: 30, value: 1 }, { atMs: 80, value: 2 }], endMs: 80 };
  load.start(2, { recorder: new Recorder(), steps });
  await new Promise((r) => setTimeout(r, 120));
  await load.stop();
  load.close();
  const ofLane2 = fake.sent.filter((r) => r.parameters!.sequence_id !== 1);
  const flags = ofLane2.map((
    r,
  ) => [r.parameters!.sequence_id, r.parameters!.sequence_start, r.parameters!.sequence_end]);
  // Lane 2's first sequence (id 2) ends when the shape lowers the concurrency; its second (id 3)
  // starts when the shape raises it again, and ends at the stop.
  assert.deepEqual(flags.filter(([, s, e]) => s || e), [[2, true, false], [2, false, true], [
    3,
    true,
    false,
  ], [3, false, true]]);
});
