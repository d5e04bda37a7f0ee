/**
 * The fault matrix (issue 17): servers that fail, vanish, stall or break the
 * protocol. In every case the run ends in bounded time with the documented
 * exit code, names the fault in one line, prints no stack trace, and every
 * request sent is counted once: as a success or as a failure.
 */
import assert from "node:assert/strict";
import { type CliResult, parseCsv, runCli, ServeProcess } from "./_helpers.ts";
import { freePort } from "../bench/process.ts";
import {
  type Answer,
  type FaultServer,
  type GrpcFault,
  grpcFaultServer,
  httpChunk,
  httpFaultServer,
  httpResponse,
  kserveFaultServer,
  MODEL,
  OK_JSON,
  profileFaulty,
  SSE_HEAD,
  sseToken,
} from "./_faults.ts";

const encoder = new TextEncoder();
const REQUESTS = 20;
const OK: Answer = { bytes: httpResponse(200, OK_JSON) };

/** Output validation makes the client decode every answer, so malformed ones are seen. */
const VALIDATED = JSON.stringify({
  data: [{ IN: [1, 2, 3, 4] }],
  validation_data: [{ OUT: [1, 2, 3, 4] }],
});

/** Asserts what every faulty run must show, and returns the (successful, failed) counts. */
function assertNamedFailure(
  r: CliResult,
  options: { code: number; message: RegExp; maxMs: number; elapsedMs: number },
): { succeeded: number; failed: number } {
  const output = r.stdout + r.stderr;
  assert.equal(r.code, options.code, output);
  assert.match(output, options.message);
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
  assert.ok(options.elapsedMs < options.maxMs, `took ${options.elapsedMs} ms`);
  return {
    succeeded: Number(/Request count: (\d+)/.exec(r.stdout)?.[1] ?? 0),
    failed: Number(/Failed requests: (\d+)/.exec(r.stdout)?.[1] ?? 0),
  };
}

/** What a faulty --request-count run of REQUESTS must show. */
interface FaultExpectation {
  message: RegExp;
  failed: number;
  args?: string[];
  /** Requests sent, when not all of REQUESTS (the run gave up on a stalled server). */
  sent?: number;
  /** Requests the server read, when not one per request sent. */
  received?: number;
}

/**
 * The run ended as a faulty run must (exit 3, or 0 without failures), and
 * every request sent is counted once: successes and failures add up to the
 * requests sent, which the server all received.
 */
function assertAccounted(
  r: CliResult,
  server: FaultServer,
  options: FaultExpectation & { startedMs: number },
): void {
  const counts = assertNamedFailure(r, {
    code: options.failed > 0 ? 3 : 0,
    message: options.message,
    maxMs: 15_000,
    elapsedMs: performance.now() - options.startedMs,
  });
  const sent = options.sent ?? REQUESTS;
  assert.deepEqual(counts, { succeeded: sent - options.failed, failed: options.failed });
  assert.equal(server.infers, options.received ?? sent, "requests the server received");
}

/**
 * Runs REQUESTS requests one at a time against a KServe fault server whose
 * infer answers are `infer(n)`'s, and checks the accounting: successes and
 * failures add up to the requests sent, which the server all received.
 */
async function httpFault(
  infer: (n: number) => Answer,
  options: FaultExpectation & { validated?: boolean },
): Promise<FaultServer> {
  const server = kserveFaultServer(infer);
  const dir = await Deno.makeTempDir();
  try {
    const data = `${dir}/data.json`;
    await Deno.writeTextFile(data, VALIDATED);
    const started = performance.now();
    const r = await profileFaulty(server.addr, [
      "--request-count",
      `${REQUESTS}`,
      ...(options.validated ? ["--input-data", data] : []),
      ...(options.args ?? []),
    ]);
    assertAccounted(r, server, { ...options, startedMs: started });
    return server;
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const faultOn = (bad: (n: number) => boolean, fault: Answer) => (n: number): Answer =>
  bad(n) ? fault : OK;

Deno.test("HTTP/1.1: a burst of 503s is counted and named", async () => {
  await httpFault(
    faultOn((n) => n >= 5 && n < 10, {
      bytes: httpResponse(503, JSON.stringify({ error: "overloaded" })),
    }),
    { message: /5 x Server returned 503: overloaded/, failed: 5 },
  );
});

Deno.test("HTTP/1.1: requests slower than --request-timeout are counted apart as timeouts", async () => {
  await httpFault(
    faultOn((n) => n === 5 || n === 6, { ...OK, delayMs: 400 }),
    {
      message: /2 x Request to "[^"]+" timed out after 100 ms/,
      failed: 2,
      args: ["--request-timeout", "100"],
    },
  );
});

Deno.test("HTTP/1.1: a connection reset mid-response fails that request only", async () => {
  const head = httpResponse(200, OK_JSON);
  await httpFault(
    faultOn((n) => n === 5, { bytes: head.subarray(0, head.length - 10), close: true }),
    { message: /1 x Connection to "[^"]+" closed in the middle of a response/, failed: 1 },
  );
});

Deno.test("HTTP/1.1: a Content-Length beyond the body, then a close, is a failed request", async () => {
  await httpFault(
    faultOn((n) => n === 5, {
      bytes: httpResponse(200, OK_JSON, { "content-length": `${OK_JSON.length + 50}` }),
      close: true,
    }),
    { message: /1 x Connection to "[^"]+" closed in the middle of a response/, failed: 1 },
  );
});

Deno.test("HTTP/1.1: a Content-Length short of the body desynchronizes one exchange", async () => {
  await httpFault(
    faultOn((n) => n === 5, {
      bytes: httpResponse(200, OK_JSON, { "content-length": `${OK_JSON.length - 5}` }),
    }),
    {
      message: /1 x Invalid JSON in infer response.*\n.*1 x Malformed status line/,
      failed: 2,
      validated: true,
    },
  );
});

Deno.test("HTTP/1.1: invalid JSON in an infer answer is named", async () => {
  await httpFault(
    faultOn((n) => n === 5, { bytes: httpResponse(200, '{"outputs": [') }),
    { message: /1 x Invalid JSON in infer response/, failed: 1, validated: true },
  );
});

Deno.test("HTTP/1.1: a truncated binary tensor is named", async () => {
  const json = JSON.stringify({
    outputs: [{
      name: "OUT",
      datatype: "INT32",
      shape: [4],
      parameters: { binary_data_size: 16 },
    }],
  });
  const body = new Uint8Array([...encoder.encode(json), ...new Uint8Array(8)]);
  await httpFault(
    faultOn((n) => n === 5, {
      bytes: httpResponse(200, body, { "inference-header-content-length": `${json.length}` }),
    }),
    { message: /1 x Binary data of output "OUT" runs past the end/, failed: 1, validated: true },
  );
});

Deno.test("HTTP/1.1: a bad Inference-Header-Content-Length is named", async () => {
  await httpFault(
    (n) =>
      n === 5
        ? { bytes: httpResponse(200, OK_JSON, { "inference-header-content-length": "10000" }) }
        : n === 6
        ? { bytes: httpResponse(200, OK_JSON, { "inference-header-content-length": "x1" }) }
        : OK,
    {
      message:
        /1 x Inference-Header-Content-Length 10000 exceeds the body.*\n.*1 x .*inference-header-content-length/is,
      failed: 2,
      validated: true,
    },
  );
});

Deno.test("HTTP/1.1: a close without an answer is resent once (a keep-alive race), then failed", async () => {
  await httpFault(
    faultOn((n) => n === 5 || n === 6, { close: true }),
    {
      message: /1 x Connection to "[^"]+" closed before a response arrived/,
      failed: 1,
      received: REQUESTS + 1,
    },
  );
});

Deno.test("HTTP/1.1: a server gone for good ends the run in bounded time, every request counted", async () => {
  const server: FaultServer = kserveFaultServer((n) => {
    if (n === 15) queueMicrotask(() => server.stop());
    return { ...OK, close: n === 15 };
  });
  const started = performance.now();
  const r = await profileFaulty(server.addr, ["--request-count", `${REQUESTS}`]);
  await server.stop();
  const counts = assertNamedFailure(r, {
    code: 3,
    message: /Cannot connect to "[^"]+": connection refused/,
    maxMs: 10_000,
    elapsedMs: performance.now() - started,
  });
  assert.equal(counts.succeeded + counts.failed, REQUESTS, r.stdout);
  assert.equal(counts.succeeded, server.infers);
});

Deno.test("HTTP/1.1: failed warmup requests are reported apart, not measured", async () => {
  const server = kserveFaultServer(
    faultOn((n) => n <= 3, { bytes: httpResponse(503, JSON.stringify({ error: "cold" })) }),
  );
  try {
    const r = await profileFaulty(server.addr, [
      "--warmup-request-count",
      "5",
      "--request-count",
      `${REQUESTS}`,
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Request count: 20\n/);
    assert.match(
      r.stdout,
      /Failed warmup requests \(not measured\): 3\n\s+3 x Server returned 503: cold/,
    );
    assert.doesNotMatch(r.stdout, /Failed requests:/);
  } finally {
    await server.stop();
  }
});

const STALL_MS = 400;
const ABANDONED = new RegExp(
  `Abandoned: no response from the server for ${STALL_MS} ms \\(--stall-timeout\\)`,
);
const HANG: Answer = { hang: true };

Deno.test("HTTP/1.1: a request never answered in a --request-count run fails as abandoned, the run ends", async () => {
  await httpFault(faultOn((n) => n === 5, HANG), {
    message: new RegExp(`1 x ${ABANDONED.source}`),
    failed: 1,
    sent: 5,
    args: ["--stall-timeout", `${STALL_MS}`],
  });
});

/** Runs a level against `server` with `args` and checks that it ends in bounded time, named. */
async function stalledLevel(
  server: FaultServer,
  args: string[],
  message: RegExp,
): Promise<{ succeeded: number; failed: number }> {
  try {
    const started = performance.now();
    const r = await profileFaulty(server.addr, ["--stall-timeout", `${STALL_MS}`, ...args]);
    return assertNamedFailure(r, {
      code: 3,
      message,
      maxMs: 10_000,
      elapsedMs: performance.now() - started,
    });
  } finally {
    await server.stop();
  }
}

Deno.test("HTTP/1.1: a server that stops answering ends a time-window level, the wait bounded", async () => {
  await stalledLevel(
    kserveFaultServer((n) => n >= 5 ? HANG : OK),
    ["--measurement-interval", "300"],
    new RegExp(`No valid requests .* 1 requests failed, most with: ${ABANDONED.source}`),
  );
});

Deno.test("HTTP/1.1: a count window ends short when nothing completes for --stall-timeout", async () => {
  const counts = await stalledLevel(
    kserveFaultServer((n) => n >= 5 ? HANG : OK),
    ["--measurement-mode", "count_windows", "--measurement-request-count", "50"],
    new RegExp(`No valid requests .* 1 requests failed, most with: ${ABANDONED.source}`),
  );
  assert.deepEqual(counts, { succeeded: 0, failed: 0 });
});

Deno.test("HTTP/1.1: one request never answered at concurrency 2: the level measured, it abandoned", async () => {
  const counts = await stalledLevel(
    kserveFaultServer((n) => n === 5 ? HANG : OK),
    ["--concurrency-range", "2", "--measurement-interval", "300", "-s", "90"],
    new RegExp(`Failed requests: 1\n\\s+1 x ${ABANDONED.source}`),
  );
  assert.ok(counts.succeeded > 0, "the level is measured");
});

Deno.test("HTTP/1.1 open loop: requests never answered are abandoned at the level's end", async () => {
  await stalledLevel(
    kserveFaultServer((n) => n >= 10 ? HANG : OK),
    ["--request-rate-range", "100", "--measurement-interval", "300"],
    new RegExp(`No valid requests .* \\d+ requests failed, most with: ${ABANDONED.source}`),
  );
});

/**
 * Kills the reference server (SIGKILL, as a crash) 1.5 s into a sweep of two
 * levels and restarts it on the same ports 500 ms later: the sweep must go
 * on, with the outage's failures in the report of the level it hit.
 */
async function killAndRestart(
  protocol: "http" | "grpc",
  levels: { flag: "--concurrency-range" | "--request-rate-range"; values: [string, string] } = {
    flag: "--concurrency-range",
    values: ["1", "2"],
  },
  step = "1",
): Promise<void> {
  const server = new ServeProcess(freePort(), freePort());
  await server.start();
  const dir = await Deno.makeTempDir();
  try {
    const port = protocol === "http" ? server.httpPort : server.grpcPort;
    const outage = (async () => {
      await new Promise((r) => setTimeout(r, 1500));
      await server.kill();
      await new Promise((r) => setTimeout(r, 500));
      await server.start();
    })();
    const started = performance.now();
    const r = await runCli([
      "-m",
      "simple",
      "-u",
      `127.0.0.1:${port}`,
      "-i",
      protocol,
      levels.flag,
      [...levels.values, step].join(":"),
      "-p",
      "500",
      // A freshly started server warms up: stability within 50 % is enough here.
      "-s",
      "50",
      "-r",
      "20",
      "-f",
      `${dir}/perf.csv`,
    ], { timeoutMs: 40_000 });
    await outage;
    assertNamedFailure(r, {
      code: 3,
      message: /Failed requests: \d+/,
      maxMs: 30_000,
      elapsedMs: performance.now() - started,
    });
    const rows = parseCsv(await Deno.readTextFile(`${dir}/perf.csv`));
    const measured = rows.slice(1);
    assert.deepEqual(measured.map((row) => row[0]).sort(), levels.values, "both levels measured");
    const errors = rows[0].indexOf("Errors");
    const failed = measured.reduce((n, row) => n + Number(row[errors]), 0);
    assert.ok(failed > 0, "the outage's failures are in the level reports");
    assert.match(r.stderr, new RegExp(`^error: ${failed} requests failed`, "m"));
  } finally {
    await server.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("HTTP/1.1: a server killed and restarted mid-level: failures counted, the sweep goes on", async () => {
  await killAndRestart("http");
});

Deno.test("gRPC: a server killed and restarted mid-level: failures counted, the sweep goes on", async () => {
  await killAndRestart("grpc");
});

Deno.test("HTTP/1.1 open loop: a server killed and restarted mid-level: failures counted, the sweep goes on", async () => {
  await killAndRestart("http", { flag: "--request-rate-range", values: ["200", "400"] }, "200");
});

/** As httpFault, over gRPC: REQUESTS ModelInfer calls one at a time. */
async function grpcFault(
  infer: (n: number) => GrpcFault,
  options: FaultExpectation & { validated?: boolean; streaming?: boolean },
): Promise<void> {
  const server = grpcFaultServer(infer);
  const dir = await Deno.makeTempDir();
  try {
    const data = `${dir}/data.json`;
    await Deno.writeTextFile(data, VALIDATED);
    const started = performance.now();
    const r = await runCli([
      "-m",
      MODEL,
      "-u",
      server.addr,
      "-i",
      "grpc",
      "--request-count",
      `${REQUESTS}`,
      ...(options.validated ? ["--input-data", data] : []),
      ...(options.streaming ? ["--streaming"] : []),
      ...(options.args ?? []),
    ], { timeoutMs: 20_000 });
    assertAccounted(r, server, { ...options, startedMs: started });
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const grpcFaultOn = (bad: (n: number) => boolean, fault: GrpcFault) => (n: number): GrpcFault =>
  bad(n) ? fault : "ok";

Deno.test("gRPC: a burst of UNAVAILABLE is counted and named", async () => {
  await grpcFault(grpcFaultOn((n) => n >= 5 && n < 10, { status: 14, message: "draining" }), {
    message: /5 x .*UNAVAILABLE.*draining/,
    failed: 5,
  });
});

for (
  const [fault, message] of [
    ["rst_stream", /1 x .*(RST_STREAM|reset).*/i],
    ["goaway", /1 x .*closed by the peer after GOAWAY NO_ERROR/],
    ["oversize_frame", /1 x .*(frame|FRAME_SIZE)/i],
    ["invalid_hpack", /1 x .*header field index \d+ out of range/],
  ] as const
) {
  Deno.test(`gRPC: ${fault.replace("_", " ")} fails that call only, named`, async () => {
    await grpcFault(grpcFaultOn((n) => n === 5, fault), { message, failed: 1 });
  });
}

for (const streaming of [false, true]) {
  Deno.test(`gRPC${streaming ? " streaming" : ""}: a call never answered fails as abandoned`, async () => {
    await grpcFault(grpcFaultOn((n) => n === 5, "hang"), {
      message: new RegExp(`1 x ${ABANDONED.source}`),
      failed: 1,
      sent: 5,
      streaming,
      args: ["--stall-timeout", `${STALL_MS}`],
    });
  });
}

Deno.test("gRPC: a message above the size limit is named (outputs decoded)", async () => {
  await grpcFault(grpcFaultOn((n) => n === 5, "oversize_message"), {
    message: /1 x .*Message of 2147483647 bytes exceeds the 1073741824-byte limit/,
    failed: 1,
    validated: true,
  });
});

for (
  const [fault, message] of [
    [{ status: 14, message: "draining" }, /1 x .*UNAVAILABLE.*draining/],
    ["rst_stream", /1 x .*(RST_STREAM|reset).*/i],
    ["goaway", /1 x .*closed by the peer after GOAWAY NO_ERROR/],
    ["oversize_frame", /1 x .*(frame|FRAME_SIZE)/i],
    ["invalid_hpack", /1 x .*header field index \d+ out of range/],
    ["oversize_message", /1 x .*Message of 2147483647 bytes exceeds the 1073741824-byte limit/],
  ] as const
) {
  const name = typeof fault === "string" ? fault.replace("_", " ") : "UNAVAILABLE";
  Deno.test(`gRPC streaming: ${name} fails that request only, named`, async () => {
    await grpcFault(grpcFaultOn((n) => n === 5, fault), { message, failed: 1, streaming: true });
  });
}

const CHAT = "/v1/chat/completions";
const TOKENS = [sseToken("Hello"), sseToken(" world"), "data: [DONE]\n\n"];

/** A streamed answer whose SSE text is split at `cuts` (offsets) into separate writes. */
function sseAnswer(text: string, options: { cuts: number[]; close?: boolean; last?: boolean }) {
  const bounds = [0, ...options.cuts, text.length];
  const parts = bounds.slice(1).map((end, i) => httpChunk(text.slice(bounds[i], end)));
  return {
    parts: [SSE_HEAD, ...parts, ...(options.last === false ? [] : [httpChunk("")])],
    close: options.close,
  };
}

/**
 * REQUESTS streamed chat completions, one at a time, from a server answering
 * `answer(n)`; checks that `failed` of them failed with `message`.
 */
async function sseFault(
  answer: (n: number) => Answer,
  options: FaultExpectation,
): Promise<void> {
  const server = httpFaultServer(
    CHAT,
    (_path, n) => n === undefined ? { bytes: httpResponse(404, "{}") } : answer(n),
  );
  try {
    const started = performance.now();
    const r = await runCli([
      "-m",
      "llm",
      "--service-kind",
      "openai",
      "--endpoint",
      "v1/chat/completions",
      "-u",
      server.addr,
      "--streaming",
      "--tokenizer",
      "none",
      "--request-count",
      `${REQUESTS}`,
      ...(options.args ?? []),
    ], { timeoutMs: 20_000 });
    assertAccounted(r, server, { ...options, startedMs: started });
  } finally {
    await server.stop();
  }
}

Deno.test("SSE: lines cut in half across reads are joined: every answer counts", async () => {
  const text = TOKENS.join("");
  await sseFault(() => sseAnswer(text, { cuts: [3, 20, 50, text.length - 4] }), {
    message: /Output Sequence Length \(tokens\): avg 2,/,
    failed: 0,
  });
});

Deno.test("SSE: a line cut in half by a closed connection fails that request, named", async () => {
  const text = TOKENS.join("");
  await sseFault(
    (n) =>
      n === 5
        ? sseAnswer(text.slice(0, 20), { cuts: [10], close: true, last: false })
        : sseAnswer(text, { cuts: [] }),
    { message: /1 x Connection to "[^"]+" closed in the middle of a response/, failed: 1 },
  );
});

Deno.test("SSE: invalid JSON in a data line fails that request, named", async () => {
  const bad = `data: {"choices": [\n\n${TOKENS.at(-1)}`;
  await sseFault((n) => sseAnswer(n === 5 ? bad : TOKENS.join(""), { cuts: [] }), {
    message: /1 x Invalid JSON from the server: "\{\\"choices\\": \["/,
    failed: 1,
  });
});

Deno.test("SSE: a stream that stops mid-answer fails as abandoned, the run ends", async () => {
  await sseFault(
    (n) =>
      n === 5
        ? { ...sseAnswer(TOKENS[0], { cuts: [], last: false }), hang: true }
        : sseAnswer(TOKENS.join(""), { cuts: [] }),
    {
      message: new RegExp(`1 x ${ABANDONED.source}`),
      failed: 1,
      sent: 5,
      args: ["--stall-timeout", `${STALL_MS}`],
    },
  );
});
