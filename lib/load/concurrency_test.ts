import assert from "node:assert/strict";
import { Recorder } from "../measure/recorder.ts";
import type { InferenceClient } from "../protocol/types.ts";
import { ConcurrencyLoad, CONNECTION_BACKOFF_MS, connectionBackoffMs } from "./concurrency.ts";
import { SequenceFeed } from "./sequences.ts";
import { FakeClient } from "./testdata/fake_client.ts";

Deno.test("connection failures in a row back off exponentially, up to a bound", () => {
  assert.deepEqual([1, 2, 3, 4].map(connectionBackoffMs), [50, 100, 200, 400]);
  assert.equal(connectionBackoffMs(5), CONNECTION_BACKOFF_MS.max);
  assert.equal(connectionBackoffMs(1000), CONNECTION_BACKOFF_MS.max);
});

Deno.test("between levels every sequence under way ends; the next level starts new ones", async () => {
  const fake = new FakeClient(1);
  const feed = new SequenceFeed([[{ inputs: [], outputs: [] }]], (r) => fake.prepare(r), {
    count: 4,
    length: 1000,
    variationPct: 0,
    idRange: { start: 1, end: 100 },
    rng: Math.random,
  });
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
