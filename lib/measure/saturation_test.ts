import assert from "node:assert/strict";
import { overSaturation, slopeWithMargin } from "./saturation.ts";
import type { WindowData } from "../types/results.ts";

function window(k: number, figures: { sent: number; done: number; latencyMs: number }): WindowData {
  return {
    startMs: k * 1000,
    endMs: (k + 1) * 1000,
    startWallNs: 0n,
    latenciesUs: Array.from({ length: figures.done }, () => figures.latencyMs * 1000),
    sendUsSum: 0,
    recvUsSum: 0,
    waitUsSum: 0,
    responseCount: figures.done,
    errorCount: 0,
    errors: new Map(),
    delayedCount: 0,
    correctedLatenciesUs: [],
    sendCount: figures.sent,
    sendLagsUs: [],
    blockedCount: 0,
  };
}

Deno.test("slopeWithMargin: an exact line has no margin; noise widens it", () => {
  const exact = slopeWithMargin([1, 2, 3, 4], [3, 5, 7, 9], 0.95);
  assert.equal(exact.slope, 2);
  assert.ok(exact.margin < 1e-9);
  const noisy = slopeWithMargin([1, 2, 3, 4, 5], [1, 3, 2, 4, 3], 0.95);
  assert.ok(Math.abs(noisy.slope - 0.5) < 1e-12);
  // se = sqrt(RSS / 3 / 10) with RSS = 5.2 - 0.5 x 5 = 2.7, t(0.975, 3) = 3.182446.
  assert.ok(Math.abs(noisy.margin - 3.182446 * Math.sqrt(2.7 / 30)) < 1e-5);
});

Deno.test("overSaturation: sends outrunning completions with growing latency; not a steady level", () => {
  // 150 sent per second, 100 served: 50 more in flight each second, latency up 0.5 s a second.
  const saturated = Array.from(
    { length: 8 },
    (_, k) => window(k, { sent: 150, done: 100 + (k % 2), latencyMs: 20 + 500 * k }),
  );
  const found = overSaturation(saturated, { level: 0.95 });
  assert.ok(found);
  assert.ok(Math.abs(found.inflightPerS - 50) < 1, String(found.inflightPerS));
  assert.ok(Math.abs(found.latencyMsPerS - 500) < 1);
  const steady = Array.from(
    { length: 8 },
    (_, k) => window(k, { sent: 100, done: 100 + (k % 2 ? 1 : -1), latencyMs: 20 + (k % 3) }),
  );
  assert.equal(overSaturation(steady, { level: 0.95 }), undefined);
  assert.equal(overSaturation(saturated.slice(0, 3), { level: 0.95 }), undefined, "3 windows");
});
