import assert from "node:assert/strict";
import { Pacer, type Wakeup } from "./pacer.ts";
import { constantSchedule, fixedSchedule } from "./schedule.ts";

/** A clock the test moves and a wakeup it fires by hand: no timing, exact assertions. */
class FakeTime implements Wakeup {
  now = 0;
  /** The pending wakeup time, or undefined. */
  at: number | undefined;
  #callback: (() => void) | undefined;

  set(atMs: number, callback: () => void): void {
    this.at = atMs;
    this.#callback = callback;
  }

  clear(): void {
    this.at = undefined;
  }

  /** Moves the clock to `ms` and fires the wakeup if it is due. */
  advance(ms: number): void {
    this.now = ms;
    if (this.at !== undefined && this.at <= ms) {
      this.at = undefined;
      this.#callback!();
    }
  }
}

function pacer(
  time: FakeTime,
  schedule: Parameters<typeof fixedSchedule>[0] | number,
  dispatch: (due: number) => boolean,
  onEnd?: () => void,
) {
  return new Pacer(
    typeof schedule === "number" ? constantSchedule(schedule) : fixedSchedule(schedule),
    dispatch,
    { wakeup: time, now: () => time.now, ...(onEnd ? { onEnd } : {}) },
  );
}

Deno.test("the pacer sleeps until each due time and sends at it", () => {
  const time = new FakeTime();
  const sent: [number, number][] = [];
  let ended = 0;
  const p = pacer(time, [0, 5, 10, 10, 20], (due) => {
    sent.push([due, time.now]);
    return true;
  }, () => ended++);
  time.now = 100;
  p.start();
  // Due times count from the start on the absolute clock; the first is due at once.
  assert.deepEqual(sent, [[100, 100]]);
  assert.equal(time.at, 105);
  time.advance(105);
  assert.equal(time.at, 110);
  time.advance(110);
  // Two sends due at the same time leave in one wake-up.
  assert.deepEqual(sent.slice(1), [[105, 105], [110, 110], [110, 110]]);
  time.advance(120);
  assert.equal(sent.length, 5);
  assert.equal(ended, 1);
  assert.equal(time.at, undefined, "nothing left to wait for");
});

Deno.test("a late wake-up sends every overdue request in order, dated by its due time", () => {
  const time = new FakeTime();
  const sent: number[] = [];
  const p = pacer(time, 1000, (due) => {
    sent.push(due);
    return true;
  });
  p.start(0);
  assert.equal(time.at, 1);
  // The wake-up comes 3.5 ms late: sends due at 1, 2, 3 and 4 ms go out now.
  time.advance(4.5);
  assert.deepEqual(sent, [1, 2, 3, 4]);
  assert.equal(time.at, 5, "no drift: the next due time stays on the schedule");
  p.stop();
  assert.equal(time.at, undefined);
});

Deno.test("a send without capacity is held until resume, then goes out with those due meanwhile", () => {
  const time = new FakeTime();
  const sent: number[] = [];
  let open = true;
  const p = pacer(time, 1000, (due) => {
    if (!open) return false;
    sent.push(due);
    return true;
  });
  p.start(0);
  time.advance(1);
  open = false;
  time.advance(2);
  assert.ok(p.paused);
  assert.equal(time.at, undefined, "a paused pacer does not wake up");
  time.now = 5.2;
  p.resume();
  assert.ok(p.paused, "still no capacity");
  open = true;
  p.resume();
  assert.ok(!p.paused);
  assert.deepEqual(sent, [1, 2, 3, 4, 5]);
  assert.equal(time.at, 6);
  p.stop();
  assert.ok(!p.paused);
  p.resume();
  assert.equal(sent.length, 5, "a stopped pacer stays stopped");
});

Deno.test("stopping from inside dispatch ends the batch", () => {
  const time = new FakeTime();
  const sent: number[] = [];
  const p: Pacer = pacer(time, 1000, (due) => {
    sent.push(due);
    if (sent.length === 2) p.stop();
    return true;
  });
  p.start(0);
  time.advance(10);
  assert.deepEqual(sent, [1, 2]);
  assert.equal(time.at, undefined);
  assert.throws(() => {
    p.start(0);
    p.start(0);
  }, /The pacer is already running/);
  p.stop();
});

Deno.test("batchMs: wake-ups come at least that far apart, each sending all that fell due", () => {
  const time = new FakeTime();
  const sent: [number, number][] = [];
  const p = new Pacer(constantSchedule(5000), (due) => {
    sent.push([due, time.now]);
    return true;
  }, { wakeup: time, now: () => time.now, batchMs: 0.5 });
  p.start();
  // The first send is due at 0.2 ms, but the pacer wakes no sooner than 0.5 ms after its start.
  assert.equal(time.at, 0.5);
  time.advance(0.5);
  assert.deepEqual(sent.map(([due]) => due), [0.2, 0.4]);
  assert.equal(time.at, 1, "0.6 is due, but not before 0.5 ms after the last wake-up");
  time.advance(1);
  assert.equal(sent.length, 5);
  assert.ok(sent.every(([due, at]) => at >= due && at - due <= 0.5), "none later than a batch");
  p.stop();
});
