/**
 * --trace-level, --trace-rate, --trace-count and --log-frequency end to end:
 * the CLI sets the reference server's trace settings over HTTP and gRPC and
 * prints the server's answer once, before the measurement settings.
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";

const QUICK = ["-m", "simple", "--request-count", "20"];

Deno.test("trace options set the server's trace settings over HTTP, then over gRPC", async () => {
  await withServer(async (server) => {
    const http = await runCli([
      ...QUICK,
      "-u",
      server.addr,
      "--trace-level",
      "TIMESTAMPS",
      "--trace-level",
      "TENSORS",
      "--trace-rate",
      "100",
    ]);
    assert.equal(http.code, 0, http.stderr + http.stdout);
    const line = "Trace settings: trace_level=TIMESTAMPS,TENSORS trace_rate=100 trace_count=-1 " +
      'log_frequency=0 trace_file="" trace_mode=triton\n';
    assert.ok(http.stdout.startsWith(`${line}*** Measurement Settings ***\n`), http.stdout);
    assert.equal(http.stdout.split("Trace settings:").length, 2);

    // The server keeps the settings: gRPC changes two more and sees the rest as HTTP left them.
    const grpc = await runCli([
      ...QUICK,
      "-i",
      "grpc",
      "-u",
      server.grpcAddr,
      "--trace-count",
      "50",
      "--log-frequency",
      "10",
    ]);
    assert.equal(grpc.code, 0, grpc.stderr + grpc.stdout);
    assert.ok(
      grpc.stdout.startsWith(
        "Trace settings: trace_level=TIMESTAMPS,TENSORS trace_rate=100 trace_count=50 " +
          'log_frequency=10 trace_file="" trace_mode=triton\n*** Measurement Settings ***\n',
      ),
      grpc.stdout,
    );

    const untouched = await runCli([...QUICK, "-u", server.addr]);
    assert.equal(untouched.code, 0, untouched.stderr + untouched.stdout);
    assert.ok(!untouched.stdout.includes("Trace settings"), untouched.stdout);
  });
});

Deno.test("trace options are refused for other service kinds and out-of-range values", async () => {
  const r = await runCli([
    "-m",
    "resnet",
    "--service-kind",
    "tfserving",
    "--trace-level",
    "VERBOSE",
    "--log-frequency",
    "-1",
  ]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "error: Trace settings (--trace-level, --log-frequency) need --service-kind triton: they are " +
      "a Triton extension\n" +
      'error: Invalid value "VERBOSE" for --trace-level: expected one of OFF, TIMESTAMPS, TENSORS\n' +
      'error: Invalid value "-1" for --log-frequency: expected an integer >= 0\n' +
      'Run "inferperf --help" for the options.\n',
  );
});
