/**
 * Load shapes end to end against the reference server, each checked from
 * the requests' own times in the profile export (when each was due and
 * sent, when its answer came): rate ramps (linear,
 * exponential) and stages follow their line within 5 % in every second, a
 * concurrency ramp keeps its line's requests in flight, gamma gaps have the
 * coefficient of variation 1 / sqrt(burstiness), --prefill-concurrency
 * bounds the requests waiting for a first token, --warmup-duration warms up
 * for its time.
 */
import assert from "node:assert/strict";
import { parseProfileExport } from "../lib/report/export.ts";
import { startServerInWorker } from "../lib/server/mod.ts";
import { runCli } from "./_helpers.ts";
import { loadSchema, validate } from "./_json_schema.ts";

type Server = Awaited<ReturnType<typeof startServerInWorker>>;

/** The first response that carries text: an OpenAI stream opens with an empty role chunk. */
function firstToken(outputs: readonly Record<string, unknown>[]): number {
  const i = outputs.findIndex((o) =>
    Object.values(o).some((v) => typeof v === "string" && /"content":"[^"]/.test(v))
  );
  return i < 0 ? 0 : i;
}

/** The exported requests of a run, their times in ms from the start of its one window. */
async function exportedRun(args: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_shapes_" });
  try {
    const r = await runCli(
      [...args, "--profile-export-file", `${dir}/e.json`, "--summary-json", `${dir}/s.json`],
      { timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const experiment = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`)).experiments[0];
    const t0 = experiment.window_boundaries[0];
    const ms = (t: bigint) => Number(t - t0) / 1e6;
    const requests = experiment.requests.map((q) => ({
      sent: ms(q.timestamp),
      intended: q.intended_timestamp === undefined ? NaN : ms(q.intended_timestamp),
      first: ms(q.response_timestamps[firstToken(q.response_outputs)]),
      end: ms(q.response_timestamps.at(-1)!),
    })).sort((a, b) => a.sent - b.sent);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    return { requests, experiment, summary, stdout: r.stdout };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Checks each whole second's sends against `expected(from, to)`, the line's
 * area, within 5 %: of the times the export says each request was due, and
 * that the requests left then (the median send lag under 2 ms; on
 * a loaded machine single sends leave tens of ms late, which moves whole
 * bursts across a second's edge, so the actual times are not counted).
 */
function followsLine(
  requests: readonly { sent: number; intended: number }[],
  options: { seconds: number; expected: (fromMs: number, toMs: number) => number },
): void {
  const lags = requests.map((r) => r.sent - r.intended).sort((a, b) => a - b);
  assert.ok(lags[lags.length >> 1] < 2, `median send lag ${lags[lags.length >> 1]} ms`);
  const sent = requests.map((r) => r.intended);
  for (let s = 0; s < options.seconds; s++) {
    const count = sent.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length;
    const expected = options.expected(s * 1000, (s + 1) * 1000);
    assert.ok(
      Math.abs(count - expected) <= 0.05 * expected,
      `second ${s}: ${count} sends, the line has ${expected.toFixed(1)}`,
    );
  }
}

/** The integral of a ramp from `start` to `rate` req/s over `rampMs`, then held, in sends. */
function rampArea(options: { start: number; rate: number; rampMs: number; exponential?: boolean }) {
  const { start, rate, rampMs } = options;
  const lnG = Math.log(rate / start);
  const within = (t: number) => {
    const x = Math.min(t, rampMs);
    const ramp = options.exponential
      ? start * rampMs / 1000 * Math.expm1(lnG * x / rampMs) / lnG
      : (start * x + (rate - start) * x * x / (2 * rampMs)) / 1000;
    return ramp + Math.max(0, t - rampMs) * rate / 1000;
  };
  return (from: number, to: number) => within(to) - within(from);
}

const FP32_16 = [{ name: "INPUT0", datatype: "FP32" as const, dims: [16] }];
const OUT_16 = [{ name: "OUTPUT0", datatype: "FP32" as const, dims: [16] }];

async function withServer(fn: (server: Server) => Promise<void>): Promise<void> {
  const server = await startServerInWorker({
    models: [
      { name: "fast", kind: "identity", inputs: FP32_16, outputs: OUT_16 },
      {
        name: "slow",
        kind: "identity",
        compute_ms: 20,
        instances: 16,
        inputs: FP32_16,
        outputs: OUT_16,
      },
      { name: "llm", llm: { ttft_ms: 60, itl_ms: 10, output_tokens: 6 }, instances: 16 },
    ],
  });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const target = (server: Server, model: string) => ["-m", model, "-u", server.addr];

Deno.test("rate ramps and stages follow their line within 5 % in every second of the export", async () => {
  await withServer(async (server) => {
    const linear = await exportedRun([
      ...target(server, "fast"),
      ...["--request-rate-range", "400", "--request-rate-ramp-duration", "2"],
      ...["--benchmark-duration", "3"],
    ]);
    assert.match(linear.stdout, /Ramping the request rate linearly from 0 to each level over 2 s/);
    followsLine(linear.requests, {
      seconds: 3,
      expected: rampArea({ start: 0, rate: 400, rampMs: 2000 }),
    });

    const exponential = await exportedRun([
      ...target(server, "fast"),
      ...["--request-rate-range", "320", "--request-rate-ramp-duration", "2"],
      ...["--ramp-up-strategy", "exponential", "--ramp-up-start", "20"],
      ...["--benchmark-duration", "3"],
    ]);
    followsLine(exponential.requests, {
      seconds: 3,
      expected: rampArea({ start: 20, rate: 320, rampMs: 2000, exponential: true }),
    });

    // k6's stages from 0: up to 200/s in 1 s, held 1 s, down to 0 in 1 s; one window of 3 s.
    const stages = await exportedRun([
      ...target(server, "fast"),
      ...["--request-rate-stages", "1s:200,1s:200,1s:0"],
    ]);
    assert.equal(stages.requests.length, 400);
    assert.deepEqual(stages.experiment.experiment, { mode: "request_rate", value: 400 / 3 });
    // The summary says how the load was shaped.
    assert.deepEqual(validate(stages.summary, await loadSchema("summary.schema.json")), []);
    assert.deepEqual(stages.summary.settings.load_shape, {
      stages: [
        { duration_ms: 1000, target: 200 },
        { duration_ms: 1000, target: 200 },
        { duration_ms: 1000, target: 0 },
      ],
    });
    assert.deepEqual(validate(exponential.summary, await loadSchema("summary.schema.json")), []);
    assert.deepEqual(exponential.summary.settings.load_shape, {
      ramp: { duration_ms: 2000, strategy: "exponential", start: 20 },
    });
    followsLine(stages.requests, {
      seconds: 3,
      expected: (from) => [100, 200, 100][from / 1000],
    });
  });
});

/** Checks the requests in flight in each whole second against the line's mean, within 5 %. */
function keepsInFlight(
  requests: readonly { sent: number; end: number }[],
  options: { seconds: number; line: (t: number) => number },
): void {
  for (let s = 0; s < options.seconds; s++) {
    const [from, to] = [s * 1000, (s + 1) * 1000];
    const busy = requests.reduce(
      (sum, r) => sum + Math.max(0, Math.min(to, r.end) - Math.max(from, r.sent)),
      0,
    ) / 1000;
    // The line's mean over the second, on 1 ms steps.
    let mean = 0;
    for (let t = from; t < to; t++) mean += options.line(t + 0.5) / 1000;
    assert.ok(Math.abs(busy - mean) <= 0.05 * mean, `second ${s}: ${busy} in flight of ${mean}`);
  }
}

Deno.test("a concurrency ramp and stages keep their line's requests in flight, second by second", async () => {
  await withServer(async (server) => {
    const ramp = await exportedRun([
      ...target(server, "slow"),
      ...["--concurrency-range", "16", "--concurrency-ramp-duration", "2"],
      ...["--benchmark-duration", "3"],
    ]);
    keepsInFlight(ramp.requests, { seconds: 3, line: (t) => 1 + 15 * Math.min(1, t / 2000) });
    // k6's stages from 1: up to 8 in 1 s, held 1 s, down to 2 in 1 s.
    const stages = await exportedRun([
      ...target(server, "slow"),
      ...["--concurrency-stages", "1s:8,1s:8,1s:2"],
    ]);
    assert.deepEqual(stages.experiment.experiment, { mode: "concurrency", value: 8 });
    keepsInFlight(stages.requests, {
      seconds: 3,
      line: (t) => t < 1000 ? 1 + 7 * t / 1000 : t < 2000 ? 8 : 8 - 6 * (t - 2000) / 1000,
    });
  });
});

/** The most requests in flight at once between `fromMs` and `toMs` (from each send to its end). */
function maxInFlight(
  requests: readonly { sent: number; end: number }[],
  window: { fromMs: number; toMs: number },
): number {
  return maxPrefilling(requests.map((r) => ({ sent: r.sent, first: r.end })), window);
}

Deno.test("AIPerf's --concurrency-ramp-duration with --request-rate --concurrency: the cap ramps from 1", async () => {
  await withServer(async (server) => {
    // 400/s of 20 ms requests want 8 in flight; the cap goes 1 -> 8 over 2 s (2 from 143 ms).
    const run = await exportedRun([
      ...target(server, "slow"),
      ...["--request-rate-range", "400", "--concurrency-range", "8"],
      ...["--concurrency-ramp-duration", "2", "--benchmark-duration", "3"],
    ]);
    assert.equal(maxInFlight(run.requests, { fromMs: 0, toMs: 100 }), 1);
    assert.equal(maxInFlight(run.requests, { fromMs: 1900, toMs: 3000 }), 8);
  });
});

Deno.test("gamma arrivals: the exported gaps have the coefficient of variation 1 / sqrt(burstiness)", async () => {
  await withServer(async (server) => {
    const run = await exportedRun([
      ...target(server, "fast"),
      ...["--request-rate-range", "200", "--burstiness", "4", "--benchmark-duration", "4"],
    ]);
    assert.match(run.stdout, /Using gamma \(burstiness 4\) distribution on request generation/);
    assert.deepEqual(run.summary.settings.load_shape, {
      request_distribution: "gamma",
      burstiness: 4,
    });
    // The gaps of the times each request was due, as the export gives them beside its send.
    const due = run.requests.map((r) => r.intended).sort((a, b) => a - b);
    assert.ok(due.every((t) => Number.isFinite(t)));
    const gaps = due.slice(1).map((t, i) => t - due[i]);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / (gaps.length - 1));
    assert.ok(Math.abs(mean - 5) < 0.25, `mean gap ${mean} ms`);
    assert.ok(Math.abs(sd / mean - 0.5) <= 0.05 * 0.5, `CV ${sd / mean}`);
    // And the requests left at those times: the median send lag is a fraction of a gap (on a
    // loaded machine single sends can leave tens of ms late, which spreads their own gaps).
    const lags = run.requests.map((r) => r.sent - r.intended).sort((a, b) => a - b);
    assert.ok(lags[lags.length >> 1] < 2, `median send lag ${lags[lags.length >> 1]} ms`);
  });
});

/**
 * The most requests of a run that were sent and had no first response yet
 * at one time (between `fromMs` and `toMs` when given).
 */
function maxPrefilling(
  requests: readonly { sent: number; first: number }[],
  window: { fromMs: number; toMs: number } = { fromMs: -Infinity, toMs: Infinity },
): number {
  const edges = requests.flatMap((r) => [{ at: r.sent, d: 1 }, { at: r.first, d: -1 }])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of edges) {
    now += e.d;
    if (e.at >= window.fromMs && e.at < window.toMs) max = Math.max(max, now);
  }
  return max;
}

Deno.test("--prefill-concurrency: at most N streamed requests wait for their first token", async () => {
  await withServer(async (server) => {
    const llm = [
      ...target(server, "llm"),
      ...["--service-kind", "openai", "--endpoint", "v1/chat/completions", "--streaming"],
      ...["--synthetic-input-tokens-mean", "8", "--output-tokens-mean", "6"],
    ];
    const gated = [...llm, "--prefill-concurrency", "2", "--request-count", "24"];
    // Closed loop of 6: each request waits 60 ms for its first token, then streams 50 ms more.
    const closed = await exportedRun([...gated, "--concurrency-range", "6"]);
    assert.equal(closed.requests.length, 24);
    assert.equal(maxPrefilling(closed.requests), 2);
    const inFlight = maxPrefilling(closed.requests.map((r) => ({ sent: r.sent, first: r.end })));
    assert.ok(inFlight > 2, `${inFlight} in flight: decoding goes on beside the prefills`);
    // Open loop at 100/s: sends wait for a permit, and are counted as held back.
    const open = await exportedRun([...gated, "--request-rate-range", "100"]);
    assert.equal(maxPrefilling(open.requests), 2);
    assert.match(open.stdout, /Sends held back by the in-flight limit: [1-9]\d*/);
    // AIPerf's ramp of the limit: 1 at first, 4 from 1.67 s on (2 from 0.33 s, 3 from 1 s).
    const ramped = await exportedRun([
      ...llm,
      ...["--prefill-concurrency", "4", "--prefill-concurrency-ramp-duration", "2"],
      ...["--request-rate-range", "100", "--benchmark-duration", "3"],
    ]);
    assert.equal(maxPrefilling(ramped.requests, { fromMs: 0, toMs: 300 }), 1);
    assert.equal(maxPrefilling(ramped.requests, { fromMs: 1800, toMs: 3000 }), 4);
  });
});

Deno.test("--warmup-duration sends for its time before the measured requests", async () => {
  await withServer(async (server) => {
    const stats = async () => {
      const res = await fetch(`http://${server.addr}/v2/models/fast/stats`);
      const body = await res.json() as { model_stats: { inference_count: number }[] };
      return body.model_stats[0].inference_count;
    };
    const before = await stats();
    const run = await exportedRun([
      ...target(server, "fast"),
      ...["--request-rate-range", "100", "--warmup-duration", "1", "--request-count", "20"],
    ]);
    assert.equal(run.requests.length, 20);
    const warmup = await stats() - before - 20;
    // 1 s at 100/s.
    assert.ok(warmup >= 95 && warmup <= 101, `${warmup} warmup requests`);
  });
});
