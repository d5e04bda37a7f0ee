/**
 * The pool's error path against a stand-in worker: the pool starts its
 * workers from Deno.mainModule, which under `deno test` is this module, so
 * here it plays a worker that is ready at once and fails the level it is
 * given with the error the level's value names. No server is involved.
 */
import assert from "node:assert/strict";
import { buildProfileConfig } from "../../cli/config.ts";
import { parseArgv } from "../../cli/args.ts";
import { UsageError } from "../../types/errors.ts";
import { InputError } from "../../input/errors.ts";
import { Recorder } from "../../measure/recorder.ts";
import type { ModelInfo } from "../../types/model.ts";
import { WorkerPool } from "./pool.ts";
import type { FromWorker, ToWorker, WorkerFailure } from "./worker.ts";

/** The failure of each level value, as a worker's handler would post it. */
const FAILURES: WorkerFailure[] = [
  { name: "InputError", message: "Step 3 of the input data has no timestamp" },
  { name: "UsageError", message: "First line\nSecond line" },
  { name: "RangeError", message: "Out of ids", stack: "RangeError: Out of ids\n    at next" },
];

// One worker per pool: under `deno test` each worker type-checks this module again (~1.5 s).
const config = buildProfileConfig(parseArgv(["-m", "x", "--workers", "1"]).options);
const model = { name: "x" } as ModelInfo;

/** What a level of value `value` fails with, on a fresh pool. */
async function levelFailure(value: number): Promise<unknown> {
  const pool = await WorkerPool.open(config, { model });
  try {
    const level = pool.level(value);
    level.start({ recorder: new Recorder() });
    const error = await level.drained().then(() => undefined, (e) => e);
    // The pool stays failed: the next level is refused at once with the same error.
    assert.throws(
      () => pool.level(value).start({ recorder: new Recorder() }),
      (e) => e === error,
    );
    return error;
  } finally {
    pool.close();
  }
}

if ("WorkerGlobalScope" in globalThis) {
  const scope = self as unknown as {
    onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
    postMessage(message: FromWorker): void;
  };
  scope.onmessage = ({ data }) => {
    if (data.type === "init") {
      scope.postMessage({ type: "ready", timeOrigin: performance.timeOrigin });
    }
    if (data.type === "start") {
      scope.postMessage({ type: "error", error: FAILURES[data.level.value] });
    }
  };
  scope.postMessage({ type: "loaded" });
} else {
  Deno.test("a worker's error fails the level as the main thread's would", async () => {
    const input = await levelFailure(0);
    assert.ok(input instanceof InputError);
    assert.equal(input.message, FAILURES[0].message);
    const usage = await levelFailure(1);
    assert.ok(usage instanceof UsageError);
    assert.deepEqual(usage.errors, ["First line", "Second line"]);
    const other = await levelFailure(2);
    assert.ok(other instanceof Error);
    assert.deepEqual([other.message, other.stack], ["Out of ids", FAILURES[2].stack]);
  });
}
