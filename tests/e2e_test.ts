/**
 * End to end against the reference server, with ground truth: the `slow`
 * model takes 10 ms on one instance, so throughput is ~100 infer/s whatever
 * the concurrency, and latency is concurrency x 10 ms (Little's law).
 * Tolerances are wide for a noisy 2-core machine but catch a wrong formula.
 */
import assert from "node:assert/strict";
import {
  type CliResult,
  parseCsv,
  profileSlowModel,
  runCli,
  within,
  withServer,
} from "./_helpers.ts";
import type { RunningServer } from "../lib/server/mod.ts";

Deno.test("concurrency sweep reproduces Little's law and perf_analyzer's report", async () => {
  await withServer(async (server) => {
    const { cli: r, header, column } = await profileSlowModel(["-u", server.addr]);
    assert.match(r.stdout, /\*\*\* Measurement Settings \*\*\*/);
    assert.match(
      r.stdout,
      /Request concurrency: 1\n {2}Client: \n/,
    );
    assert.match(r.stdout, /Inferences\/Second vs\. Client Average Batch Latency/);
    assert.match(r.stdout, /Concurrency: 4, throughput: [\d.]+ infer\/sec, latency \d+ usec/);
    assert.deepEqual(header.slice(0, 13), [
      "Concurrency",
      "Inferences/Second",
      "Client Send",
      "Network+Server Send/Recv",
      "Server Queue",
      "Server Compute Input",
      "Server Compute Infer",
      "Server Compute Output",
      "Client Recv",
      "p50 latency",
      "p90 latency",
      "p95 latency",
      "p99 latency",
    ]);
    within(column(4, "Server Queue"), 30_000, 0.25, "queue at concurrency 4");
    assert.ok(column(1, "Server Queue") < 2_000, "no queue at concurrency 1");
  });
});

Deno.test("count windows and --percentile stabilize on the percentile", async () => {
  await withServer(async (server) => {
    const r = await runCli([
      // `slow` (10 ms, one instance) keeps p95 steady on a busy machine; sub-millisecond models do not.
      "-m",
      "slow",
      "-u",
      server.addr,
      "--measurement-mode",
      "count_windows",
      "--measurement-request-count",
      "50",
      "--percentile",
      "95",
      "--concurrency-range",
      "2",
      "-s",
      "50",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Stabilizing using p95 latency/);
    assert.match(r.stdout, /Client p95 Batch Latency/);
    assert.doesNotMatch(r.stdout, /Avg latency:/);
  });
});

Deno.test("--request-count sends exactly that many requests in one window", async () => {
  await withServer(async (server) => {
    const r = await runCli(["-m", "simple", "-u", server.addr, "--request-count", "123", "-v"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Request count: 123\n/);
  });
});

Deno.test("a perf_analyzer script's command line: older letters, joined values, a stray word", async () => {
  await withServer(async (server) => {
    const r = await runCli([
      "-m",
      "simple",
      `-u${server.addr}`,
      "-t",
      "2",
      "-a",
      "-p500",
      "--request-count=40",
      "--model-signature-name",
      "serving_default",
      "None",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(
      r.stderr,
      'warning: Ignored argument "None": perf_analyzer ignores it too\n' +
        "warning: Option --model-signature-name applies to --service-kind tfserving only: " +
        "ignored, as perf_analyzer ignores it\n",
    );
    assert.match(r.stdout, /Request concurrency: 2\n/);
    assert.match(r.stdout, /Request count: 40\n/);
  });
});

Deno.test("an unknown model is one line and exit 99", async () => {
  await withServer(async (server) => {
    const r = await runCli(["-m", "nope", "-u", server.addr]);
    assert.equal(r.code, 99);
    assert.match(r.stderr, /^error: .*nope.*\n$/);
  });
});

Deno.test("a server that is down is one line and exit 3 within seconds", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const started = performance.now();
  const r = await runCli(["-m", "simple", "-u", `127.0.0.1:${port}`]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, new RegExp(`^error: .*127\\.0\\.0\\.1:${port}.*\\n$`));
  assert.ok(performance.now() - started < 10_000);
});

Deno.test("usage errors are all listed, one line each, exit 1", async () => {
  const r = await runCli(["--concurrency-range", "x", "--percentile", "0"]);
  assert.equal(r.code, 1);
  for (const line of r.stderr.trimEnd().split("\n").slice(0, -1)) assert.match(line, /^error: /);
  assert.match(r.stderr, /-m\/--model-name is required/);
  assert.match(r.stderr, /--concurrency-range/);
  assert.match(r.stderr, /--percentile/);
});

Deno.test("--help lists grouped options with defaults; --version prints the version", async () => {
  const help = await runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Measurement:\n/);
  assert.match(
    help.stdout,
    /-p, --measurement-interval MS +Length of a time window in milliseconds\. \[default: 5000\]/,
  );
  const version = await runCli(["--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^inferperf \d+\.\d+\.\d+ \(deno /);
});

/**
 * The `slow` model at concurrency 1 to 8 in windows of `windowMs`, sent
 * SIGINT at `signalAfterMs`: the CLI's result and the rows of its CSV (none
 * when it wrote none).
 */
async function interruptedRun(
  server: RunningServer,
  options: { windowMs: number; signalAfterMs: number[] },
): Promise<{ r: CliResult; rows: string[][] }> {
  const dir = await Deno.makeTempDir();
  try {
    const csv = `${dir}/perf.csv`;
    const r = await runCli(
      [
        "-m",
        "slow",
        "-u",
        server.addr,
        "--concurrency-range",
        "1:8",
        "-p",
        String(options.windowMs),
        "-s",
        "90",
        "-f",
        csv,
      ],
      { signalAfterMs: options.signalAfterMs },
    );
    const rows = await Deno.readTextFile(csv).then(parseCsv, () => []);
    return { r, rows };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("Ctrl-C once finishes the window, writes reports and exits 130", async () => {
  await withServer(async (server) => {
    const { r, rows } = await interruptedRun(server, { windowMs: 500, signalAfterMs: [4000] });
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stdout, /Interrupted/);
    assert.ok(rows.length >= 2, "at least one level was written");
  });
});

Deno.test("Ctrl-C twice writes what was measured and exits at once with 130", async () => {
  await withServer(async (server) => {
    // The second Ctrl-C follows closely: after the first, the run still ends its window and
    // waits for the requests in flight (10 ms each on "slow"), so it cannot finish in between.
    const { r, rows } = await interruptedRun(server, {
      windowMs: 300,
      signalAfterMs: [3000, 3005],
    });
    assert.equal(r.code, 130, r.stderr);
    assert.ok(rows.length >= 2, "the levels measured before the interrupt were written");
  });
});

Deno.test("serve names the port already in use, one line, exit 1", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = taken.addr.port;
    const r = await runCli([
      "serve",
      "--http-port",
      String(port),
      "--grpc-port",
      "0",
      "--metrics-port",
      "0",
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^error: Cannot listen on 127\\.0\\.0\\.1:${port} \\(--http-port\\): the address is already in use\\n`,
      ),
    );
  } finally {
    taken.close();
  }
});
