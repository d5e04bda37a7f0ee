import assert from "node:assert/strict";
import { parseArgv } from "../cli/args.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import type { LevelResult } from "../types/results.ts";
import { InputError } from "../input/errors.ts";
import { Interrupt } from "../measure/interrupt.ts";
import { ConnectionError } from "../protocol/errors.ts";
import { CheckpointStore } from "./checkpoint.ts";
import { buildSweepConfig, goalsText, pointKey, type SweepConfig } from "./config.ts";
import { type MeasurePoint, runSweep } from "./runner.ts";
import { record } from "./testdata/records.ts";

/** Latency grows 10 ms per concurrency; model "wobbly" never stabilizes at 2. */
function fakeResult(config: ProfilePlan): LevelResult {
  const value = config.concurrency.start;
  const r = record(
    { model: config.model, batchSize: config.batchSize, value },
    {
      throughput: 100 * value,
      p99Ms: 10 * value,
      stable: !(config.model === "wobbly" && value === 2),
    },
  );
  return r.result;
}

function sweepConfig(...argv: string[]): SweepConfig {
  return buildSweepConfig(parseArgv(["--profile-models", ...argv]).options);
}

async function withStore(
  fn: (open: (config: SweepConfig) => CheckpointStore, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn((config) => {
      const store = CheckpointStore.open(dir);
      store.use(config.settings, goalsText(config.goals));
      return store;
    }, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const keysOf = (records: Iterable<{ point: Parameters<typeof pointKey>[0] }>) =>
  [...records].map((r) => pointKey(r.point)).sort();

Deno.test("a resumed sweep measures only what is missing and ends with the uninterrupted set", async () => {
  const config = sweepConfig("a,b", "-b", "1,2", "--concurrency-range", "1:3");
  let uninterrupted: string[] = [];
  await withStore(async (open) => {
    const full = await runSweep(config, {
      store: open(config),
      interrupt: new Interrupt(),
      measure: async (c) => await Promise.resolve(fakeResult(c)),
    });
    assert.equal(full.records.length, 12);
    assert.equal(full.interrupted, false);
    uninterrupted = keysOf(full.records);
  });
  await withStore(async (open, dir) => {
    const interrupt = new Interrupt();
    let calls = 0;
    const first = await runSweep(config, {
      store: open(config),
      interrupt,
      measure: async (c) => {
        // Ctrl-C arrives during the fifth point: it still completes and is saved.
        if (++calls === 5) interrupt.trigger();
        return await Promise.resolve(fakeResult(c));
      },
    });
    assert.equal(first.interrupted, true);
    assert.equal(first.measured, 5);
    assert.equal(CheckpointStore.open(dir).records.size, 5);

    const measured: string[] = [];
    const second = await runSweep(config, {
      store: open(config),
      interrupt: new Interrupt(),
      measure: async (c) => {
        measured.push(`${c.model}/${c.batchSize}/${c.concurrency.start}`);
        return await Promise.resolve(fakeResult(c));
      },
    });
    assert.equal(second.resumed, 5);
    assert.equal(second.measured, 7);
    assert.equal(measured[0], "a/2/3", "the sixth point comes next");
    assert.equal(second.records.length, 12);
    const all = CheckpointStore.open(dir);
    assert.equal(all.loaded, `${dir}/1.ckpt`);
    assert.deepEqual(keysOf(all.records.values()), uninterrupted);
    assert.deepEqual(keysOf(second.records), uninterrupted);
  });
});

Deno.test("a hard interrupt abandons the running point without saving it", async () => {
  const config = sweepConfig("a", "--concurrency-range", "1:3");
  await withStore(async (open, dir) => {
    const interrupt = new Interrupt();
    let calls = 0;
    const measure: MeasurePoint = async (c, { interrupt: point }) => {
      if (++calls === 2) {
        interrupt.trigger();
        interrupt.trigger();
        await point.sleep(60_000);
        assert.equal(point.hard, true);
      }
      return fakeResult(c);
    };
    const outcome = await runSweep(config, { store: open(config), interrupt, measure });
    assert.equal(outcome.interrupted, true);
    assert.equal(outcome.measured, 1);
    assert.deepEqual([...CheckpointStore.open(dir).records.values()].map((r) => r.point.value), [
      1,
    ]);
  });
});

Deno.test("a series ends at the latency threshold or an unstable point, on resume too", async () => {
  const config = sweepConfig("a,wobbly", "--concurrency-range", "1:5", "-l", "20");
  await withStore(async (open) => {
    const ended: string[] = [];
    const outcome = await runSweep(config, {
      store: open(config),
      interrupt: new Interrupt(),
      measure: async (c) => await Promise.resolve(fakeResult(c)),
      events: { seriesEnd: (series, reason) => ended.push(`${series.point.model}: ${reason}`) },
    });
    assert.deepEqual(outcome.records.map((r) => `${r.point.model}${r.point.value}`), [
      "a1",
      "a2",
      "a3",
      "wobbly1",
      "wobbly2",
    ]);
    assert.deepEqual(ended, [
      "a: latency reached the -l/--latency-threshold of 20 msec: higher loads are skipped",
      "wobbly: the point did not stabilize: higher loads are skipped",
    ]);
    const again = await runSweep(config, {
      store: open(config),
      interrupt: new Interrupt(),
      measure: () => Promise.reject(new Error("nothing is measured again")),
    });
    assert.equal(again.resumed, 5);
  });
});

Deno.test("a point error skips its series and is not saved; a sweep-wide error stops the sweep", async () => {
  const config = sweepConfig("a", "-b", "1,16", "--concurrency-range", "1:2");
  await withStore(async (open) => {
    const failed: string[] = [];
    const outcome = await runSweep(config, {
      store: open(config),
      interrupt: new Interrupt(),
      measure: async (c) => {
        if (c.batchSize === 16) throw new InputError("Can not use batch size 16");
        return await Promise.resolve(fakeResult(c));
      },
      events: { pointFailed: (p, e) => failed.push(`${p.batchSize}/${p.value}: ${e.message}`) },
    });
    assert.deepEqual(failed, ["16/1: Can not use batch size 16"]);
    assert.equal(outcome.failures.length, 1);
    assert.equal(outcome.records.length, 2);
    await assert.rejects(
      runSweep(config, {
        store: open(config),
        interrupt: new Interrupt(),
        measure: () => Promise.reject(new ConnectionError("Connection refused", "x:1")),
      }),
      ConnectionError,
    );
  });
});
