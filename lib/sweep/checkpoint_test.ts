import assert from "node:assert/strict";
import { CheckpointError, CheckpointStore } from "./checkpoint.ts";
import { pointKey } from "./config.ts";
import { record } from "./testdata/records.ts";

const SETTINGS = { url: "localhost:8000", "measurement-interval": 200, header: [] };
const GOALS = { objective: "throughput", constraints: ["max-p99-latency=20"] };

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const files = (dir: string) =>
  [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".ckpt")).sort();

function checkpointError(fn: () => unknown): CheckpointError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CheckpointError) return e;
    throw e;
  }
  throw new Error("Expected a CheckpointError");
}

Deno.test("numbering follows seed 003: one new index per run that changes data, none deleted", async () => {
  await withDir((root) => {
    const dir = `${root}/ckpt`;
    const first = CheckpointStore.open(dir);
    assert.equal(first.loaded, undefined);
    first.use(SETTINGS, GOALS);
    assert.equal(first.save(), undefined, "nothing to save");
    first.add(record({ value: 1 }, { throughput: 10, p99Ms: 5 }));
    assert.equal(first.save(), `${dir}/0.ckpt`);
    first.add(record({ value: 2 }, { throughput: 20, p99Ms: 6 }));
    assert.equal(first.save(), `${dir}/0.ckpt`, "a run rewrites its own checkpoint");
    assert.deepEqual(files(dir), ["0.ckpt"]);

    const second = CheckpointStore.open(dir);
    assert.equal(second.loaded, `${dir}/0.ckpt`);
    assert.equal(second.records.size, 2);
    second.use(SETTINGS, GOALS);
    assert.equal(second.save(), undefined, "unchanged data writes no checkpoint");
    assert.equal(second.latest, `${dir}/0.ckpt`);
    second.add(record({ value: 4 }, { throughput: 30, p99Ms: 9 }));
    assert.equal(second.save(), `${dir}/1.ckpt`);
    assert.equal(second.latest, `${dir}/1.ckpt`);
    assert.deepEqual(files(dir), ["0.ckpt", "1.ckpt"]);

    Deno.writeTextFileSync(`${dir}/results.csv`, "not a checkpoint");
    Deno.writeTextFileSync(`${dir}/07.ckpt`, "not a checkpoint name");
    const third = CheckpointStore.open(dir);
    assert.equal(third.loaded, `${dir}/1.ckpt`);
    assert.equal(third.records.size, 3);
    assert.equal(CheckpointStore.open(dir).file, `${dir}/2.ckpt`);
  });
});

Deno.test("points survive the round trip, percentiles and server data included", async () => {
  await withDir((dir) => {
    const store = CheckpointStore.open(dir);
    store.use(SETTINGS, GOALS);
    const original = record({ model: "m", batchSize: 4, value: 3 }, { throughput: 12.5, p99Ms: 7 });
    store.add(original);
    store.save();
    const loaded = CheckpointStore.open(dir);
    assert.deepEqual(loaded.records.get(pointKey(original.point)), original);
    assert.deepEqual(loaded.storedGoals, GOALS);
    assert.deepEqual(loaded.storedSettings, SETTINGS);
  });
});

Deno.test("a corrupt or unreadable checkpoint is an error naming the file", async () => {
  await withDir((dir) => {
    const store = CheckpointStore.open(dir);
    store.use(SETTINGS, GOALS);
    store.add(record({}, { throughput: 1, p99Ms: 1 }));
    store.save();
    const text = Deno.readTextFileSync(`${dir}/0.ckpt`);
    Deno.writeTextFileSync(`${dir}/1.ckpt`, text.slice(0, text.length / 2));
    const corrupt = checkpointError(() => CheckpointStore.open(dir));
    assert.equal(corrupt.file, `${dir}/1.ckpt`);
    assert.match(
      corrupt.message,
      /^Checkpoint ".*\/1\.ckpt" is corrupt \(.*JSON.*\); move it away to resume from 0\.ckpt, or use another --checkpoint-directory to start afresh$/,
    );
    Deno.writeTextFileSync(`${dir}/1.ckpt`, text.replace('"throughput":1,', ""));
    assert.match(
      checkpointError(() => CheckpointStore.open(dir)).message,
      /is corrupt \(a result lacks client\.throughput\)/,
    );
    Deno.writeTextFileSync(`${dir}/1.ckpt`, '{"format": "something else"}');
    assert.match(
      checkpointError(() => CheckpointStore.open(dir)).message,
      /is corrupt \(not an inferperf sweep checkpoint\)/,
    );
    Deno.removeSync(`${dir}/1.ckpt`);
    Deno.mkdirSync(`${dir}/2.ckpt`);
    const unreadable = checkpointError(() => CheckpointStore.open(dir));
    assert.equal(unreadable.file, `${dir}/2.ckpt`);
    assert.match(unreadable.message, /^Can not read checkpoint ".*\/2\.ckpt": /);
    Deno.writeTextFileSync(`${dir}/file`, "");
    assert.match(
      checkpointError(() => CheckpointStore.open(`${dir}/file`)).message,
      /^Can not read the checkpoint directory ".*\/file": /,
    );
  });
});

Deno.test("a checkpoint measured with other settings is refused, naming each difference", async () => {
  await withDir((dir) => {
    const store = CheckpointStore.open(dir);
    store.use(SETTINGS, GOALS);
    store.add(record({}, { throughput: 1, p99Ms: 1 }));
    store.save();
    const other = CheckpointStore.open(dir);
    const error = checkpointError(() =>
      other.use({ ...SETTINGS, "measurement-interval": 500, header: ["A: 1"] }, GOALS)
    );
    assert.equal(error.file, `${dir}/0.ckpt`);
    assert.equal(
      error.message,
      `Checkpoint "${dir}/0.ckpt" was measured with other settings: -p/--measurement-interval 200 (now 500), -H/--header none (now "A: 1"). Its points can not be mixed with new ones: use the same settings, or another --checkpoint-directory (or remove "${dir}") to start afresh`,
    );
    other.use(SETTINGS, { objective: "p99-latency", constraints: [] });
  });
});
