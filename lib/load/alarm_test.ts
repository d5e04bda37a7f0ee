import assert from "node:assert/strict";
import { Alarm, type AlarmOptions, startAlarmThread } from "./alarm.ts";

/** Sets the alarm; resolves with the time it called back, after noting `atMs` in `calls`. */
function ringAt(alarm: Alarm, atMs: number, calls: number[]): Promise<number> {
  return new Promise((resolve) =>
    alarm.set(atMs, () => {
      calls.push(atMs);
      resolve(performance.now());
    })
  );
}

/** Calls back once per setting, never early, the latest setting winning; silent once closed. */
async function checkSettings(alarm: Alarm): Promise<void> {
  const calls: number[] = [];
  try {
    // The first settings may fall before the worker has started (the alarm polls meanwhile).
    for (const delayMs of [0, 3, 1, 5, 2]) {
      const at = performance.now() + delayMs;
      const rang = await ringAt(alarm, at, calls);
      assert.ok(rang >= at, `called back ${at - rang} ms early`);
    }
    const later = performance.now() + 4;
    alarm.set(performance.now() + 1, () => calls.push(-1));
    const rang = await ringAt(alarm, later, calls);
    assert.ok(rang >= later);
    alarm.set(performance.now() + 1, () => calls.push(-2));
    alarm.clear();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(calls.length, 6);
    assert.ok(calls.every((c) => c > 0), "replaced and cleared settings never call back");
  } finally {
    alarm.close();
  }
  alarm.set(0, () => calls.push(-3));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(calls.length, 6, "a closed alarm stays silent");
}

Deno.test("the alarm calls back once per setting, never early, the latest setting winning", async () => {
  await checkSettings(new Alarm());
});

Deno.test("an alarm whose thread another thread starts wakes its owner by message", async () => {
  // As in a load worker: the main thread starts the alarm's thread on request (see pool.ts).
  const threads: Worker[] = [];
  const options: AlarmOptions = { spawn: (setup) => threads.push(startAlarmThread(setup)) };
  try {
    await checkSettings(new Alarm(options));
    assert.equal(threads.length, 1);
  } finally {
    for (const thread of threads) thread.terminate();
  }
});

Deno.test("restMs: settings at or after the rest's end and sooner ones both call back, never early", async () => {
  const restMs = 2;
  const alarm = new Alarm({ restMs });
  const calls: number[] = [];
  try {
    // Past the start-up poll, so that the thread fires and rests.
    await new Promise((r) => setTimeout(r, 50));
    let at = performance.now() + 1;
    for (let i = 0; i < 20; i++) {
      const rang = await ringAt(alarm, at, calls);
      assert.ok(rang >= at, `called back ${at - rang} ms early`);
      // Alternately the end of the rest (no signal to the thread) and a time within it (a signal).
      at += i % 2 === 0 ? restMs : restMs / 4;
      at = Math.max(at, performance.now());
    }
    // Cleared within a rest: nothing more.
    alarm.set(at + restMs, () => calls.push(-1));
    alarm.clear();
    await new Promise((r) => setTimeout(r, 3 * restMs + 5));
    assert.equal(calls.length, 20);
    assert.ok(calls.every((c) => c > 0));
  } finally {
    alarm.close();
  }
});
