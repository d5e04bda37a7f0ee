/**
 * End to end against the reference server, with ground truth: the `slow`
 * model takes 10 ms on one instance, so throughput is ~100 infer/s whatever
 * the concurrency, and latency is concurrency x 10 ms (Little's law).
 * Tolerances are wide for a noisy 2-core machine but catch a wrong formula.
 */
import assert from "node:assert/strict";
import { parseCsv, runCli, withServer } from "./_helpers.ts";

function within(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= expected * tolerance,
    `${what}: ${actual} not within ${tolerance * 100}% of ${expected}`,
  );
}

Deno.test("concurrency sweep reproduces Little's law and perf_analyzer's report", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    const csv = `${dir}/perf.csv`;
    const r = await runCli([
      "-m",
      "slow",
      "-u",
      server.addr,
      "--concurrency-range",
      "1:4:3",
      "-p",
      "1000",
      "-f",
      csv,
      "--verbose-csv",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /\*\*\* Measurement Settings \*\*\*/);
    assert.match(
      r.stdout,
      /Request concurrency: 1\n {2}Client: \n/,
    );
    assert.match(r.stdout, /Inferences\/Second vs\. Client Average Batch Latency/);
    assert.match(r.stdout, /Concurrency: 4, throughput: [\d.]+ infer\/sec, latency \d+ usec/);

    const [header, ...rows] = parseCsv(await Deno.readTextFile(csv));
    assert.deepEqual(header!.slice(0, 13), [
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
    const col = (row: string[], name: string) => Number(row[header!.indexOf(name)]);
    const byLevel = new Map(rows.map((row) => [Number(row[0]), row]));
    for (const level of [1, 4]) {
      const row = byLevel.get(level)!;
      within(col(row, "Inferences/Second"), 100, 0.2, `throughput at ${level}`);
      within(col(row, "Avg latency"), level * 10_000, 0.25, `latency at ${level}`);
      within(col(row, "Server Compute Infer"), 10_000, 0.2, `compute at ${level}`);
    }
    within(col(byLevel.get(4)!, "Server Queue"), 30_000, 0.25, "queue at concurrency 4");
    assert.ok(col(byLevel.get(1)!, "Server Queue") < 2_000, "no queue at concurrency 1");
    await Deno.remove(dir, { recursive: true });
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

Deno.test("an unknown model is one line and exit 99", async () => {
  await withServer(async (server) => {
    const r = await runCli(["-m", "nope", "-u", server.addr]);
    assert.equal(r.code, 99);
    assert.match(r.stderr, /^error: .*nope.*\n$/);
  });
});

Deno.test("a server that is down is one line and exit 99 within seconds", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const started = performance.now();
  const r = await runCli(["-m", "simple", "-u", `127.0.0.1:${port}`]);
  assert.equal(r.code, 99);
  assert.match(r.stderr, new RegExp(`^error: .*127\\.0\\.0\\.1:${port}.*\\n$`));
  assert.ok(performance.now() - started < 10_000);
});

Deno.test("usage errors are all listed, exit 99", async () => {
  const r = await runCli(["--concurrency-range", "x", "--percentile", "0"]);
  assert.equal(r.code, 99);
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

Deno.test("Ctrl-C once finishes the window, writes reports and exits 0", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
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
        "500",
        "-s",
        "90",
        "-f",
        csv,
      ],
      { signalAfterMs: [4000] },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Interrupted/);
    const rows = parseCsv(await Deno.readTextFile(csv));
    assert.ok(rows.length >= 2, "at least one level was written");
    await Deno.remove(dir, { recursive: true });
  });
});

Deno.test("Ctrl-C twice writes what was measured and exits at once with 130", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
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
        "300",
        "-s",
        "90",
        "-f",
        csv,
      ],
      // The second Ctrl-C follows closely: after the first, the run still ends its window and
      // waits for the requests in flight (10 ms each on "slow"), so it cannot finish in between.
      { signalAfterMs: [3000, 3005] },
    );
    assert.equal(r.code, 130, r.stderr);
    const rows = parseCsv(await Deno.readTextFile(csv));
    assert.ok(rows.length >= 2, "the levels measured before the interrupt were written");
    await Deno.remove(dir, { recursive: true });
  });
});
