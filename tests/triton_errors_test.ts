/**
 * Errors against the real Triton server: what Triton answers reaches the user
 * as one line (unknown model or version, wrong shape or datatype, FP16 as
 * JSON, a decoupled model without the stream, the server stopped mid-level),
 * and the options this build cannot serve (no metrics endpoint, no tracing)
 * fail in one line before any load (metrics only with --require-metrics).
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "./_helpers.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";
import { GrpcClient } from "../lib/protocol/grpc/client.ts";
import { InferError } from "../lib/protocol/errors.ts";

const server = "reason" in triton ? undefined : await startTriton();
const http = ["-u", server?.http ?? ""];
const grpc = ["-i", "grpc", "-u", server?.grpc ?? ""];

/** The CLI's stderr must be exactly `error: <message>` on one line. */
function assertOneLineError(cli: CliResult, code: number, message: RegExp): void {
  assert.equal(cli.code, code, cli.stderr + cli.stdout);
  assert.match(cli.stderr, /^error: [^\n]*\n$/, `one line:\n${cli.stderr}`);
  assert.match(cli.stderr, message);
}

/** All `count` requests failed with `message`: the run's one-line error. */
function allFailed(count: number, message: string): RegExp {
  const escaped = message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(
    `^error: No valid requests recorded within time interval\\. Please use a larger time ` +
      `window\\. ${count} requests failed, most with: ${escaped}\\n$`,
  );
}

/**
 * An HTTP proxy to Triton that misstates the metadata and configuration of
 * identity_fp32 by `rewrite`, so that the client sends what the real model
 * refuses: the only way Triton's shape and datatype checks can be reached by
 * a client that checks its requests against the metadata.
 */
function misleadingProxy(target: string, rewrite: (json: string) => string) {
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const url = new URL(request.url);
    const answer = await fetch(`http://${target}${url.pathname}`, {
      method: request.method,
      headers: { ...Object.fromEntries(request.headers), "accept-encoding": "identity" },
      body: request.body,
    });
    const text = new Uint8Array(await answer.arrayBuffer());
    const misstated = /^\/v2\/models\/identity_fp32(\/config)?$/.test(url.pathname);
    return new Response(
      misstated ? rewrite(new TextDecoder().decode(text)) : text,
      { status: answer.status, headers: answer.headers },
    );
  });
  return { addr: `127.0.0.1:${proxy.addr.port}`, close: () => proxy.shutdown() };
}

tritonTest("an unknown model or version: Triton's message, one line, exit 99", async () => {
  for (const [target, status] of [[http, "404"], [grpc, "NOT_FOUND"]]) {
    assertOneLineError(
      await runCli(["-m", "nope", ...target]),
      99,
      new RegExp(
        `^error: Server returned ${status}: Request for unknown model: 'nope' is not found`,
      ),
    );
    assertOneLineError(
      await runCli(["-m", "slow", "-x", "7", ...target]),
      99,
      new RegExp(`Server returned ${status}: Request for unknown model: 'slow' version 7 is not`),
    );
  }
});

tritonTest(
  "wrong shape and wrong datatype: Triton's refusal reaches the report in one line",
  async () => {
    const cases = [
      {
        rewrite: (json: string) => json.replaceAll("[16]", "[4]"),
        message: "Server returned 400: [request id: <id_unknown>] unexpected shape for input " +
          "'INPUT0' for model 'identity_fp32'. Expected [16], got [4].",
      },
      {
        rewrite: (json: string) =>
          json.replaceAll('"FP32"', '"INT32"').replaceAll("_FP32", "_INT32"),
        message: "Server returned 400: [request id: <id_unknown>] inference input 'INPUT0' " +
          "data-type is 'INT32', but model 'identity_fp32' expects 'FP32'",
      },
    ];
    for (const { rewrite, message } of cases) {
      const proxy = misleadingProxy(server!.http, rewrite);
      try {
        const cli = await runCli(["-m", "identity_fp32", "-u", proxy.addr, "--request-count", "5"]);
        assertOneLineError(cli, 3, allFailed(5, message));
      } finally {
        await proxy.close();
      }
    }
    // gRPC, unary and streamed: the client library's error is the same one line.
    for (const streaming of [false, true]) {
      const client = new GrpcClient({ url: server!.grpc, streaming });
      try {
        const session = await client.openSession();
        const request = client.prepare({
          inputs: [{ name: "INPUT0", datatype: "FP32", shape: [4], data: new Uint8Array(16) }],
          outputs: ["OUTPUT0"],
        }, { model: "identity_fp32", version: "" });
        await assert.rejects(
          session.infer(request, { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 }),
          (error: unknown) =>
            error instanceof InferError &&
            error.message ===
              `Server returned ${streaming ? "an error" : "INVALID_ARGUMENT"}: [request id: ` +
                "<id_unknown>] unexpected shape for input 'INPUT0' for model 'identity_fp32'. " +
                "Expected [16], got [4].",
        );
        session.close();
      } finally {
        await client.close();
      }
    }
  },
);

tritonTest("FP16 as JSON and a decoupled model without the stream: Triton says why", async () => {
  const cases: [string[], string][] = [
    [
      ["-m", "mixed", ...http, "--input-tensor-format", "json"],
      "Server returned 400: receiving FP16 data via JSON is not supported. Please use the binary " +
      "data format for input INPUT1",
    ],
    [
      ["-m", "mixed", ...http, "--output-tensor-format", "json"],
      "Server returned 400: sending FP16 data via JSON is not supported. Please use the binary " +
      "data format for output",
    ],
    [
      ["-m", "decoupled", ...http],
      "Server returned 501: HTTP end point doesn't support models with decoupled transaction policy",
    ],
    [
      ["-m", "decoupled", ...grpc],
      "Server returned UNIMPLEMENTED: ModelInfer RPC doesn't support models with decoupled " +
      "transaction policy",
    ],
  ];
  for (const [args, message] of cases) {
    assertOneLineError(await runCli([...args, "--request-count", "3"]), 3, allFailed(3, message));
  }
});

tritonTest("a shared-memory output slot too small: Triton's internal error, one line", async () => {
  // Slots of fixed-size outputs are sized from the model; a variable-size output (BYTES, -1 dims)
  // gets --output-shared-memory-size.
  for (const [target, status] of [[http, "500"], [grpc, "INTERNAL"]] as const) {
    const cli = await runCli([
      "-m",
      "strings",
      ...target,
      "--shape",
      "INPUT0:4",
      "--string-length",
      "16",
      "--shared-memory",
      "system",
      "--output-shared-memory-size",
      "8",
      "--request-count",
      "3",
    ], { permissions: ["-A"] });
    assertOneLineError(
      cli,
      3,
      allFailed(
        3,
        `Server returned ${status}: shared memory size specified with the request for output ` +
          "'OUTPUT0' (8 bytes) should be at least 80 bytes to hold the results",
      ),
    );
  }
});

tritonTest(
  "metrics and tracing are off in this build: tracing fails in one line, metrics warn (strict: fail)",
  async () => {
    for (const target of [http, grpc]) {
      const trace = await runCli(["-m", "slow", ...target, "--trace-level", "TIMESTAMPS"]);
      assertOneLineError(
        trace,
        99,
        /need a server with Triton's trace extension; "triton" does not list "trace"/,
      );
      // This build has no metrics endpoint: its HTTP port answers 404 for /metrics.
      const metricsArgs = ["--collect-metrics", "--metrics-url", `${server!.http}/metrics`];
      const metrics = await runCli(["-m", "slow", ...target, ...metricsArgs, "--require-metrics"]);
      assertOneLineError(
        metrics,
        99,
        /^error: --collect-metrics: cannot read server metrics from "[^"]+\/metrics": the server answered 404/,
      );
      assert.doesNotMatch(trace.stdout + metrics.stdout, /Request concurrency/, "no load");
      // Without --require-metrics (as Model Analyzer runs perf_analyzer): measured, one warning.
      const measured = await runCli([
        ...["-m", "slow", ...target, ...metricsArgs, "--request-count", "20"],
      ]);
      assert.equal(measured.code, 0, measured.stderr);
      assert.match(
        measured.stderr,
        /^warning: Cannot collect server metrics from [^\n]*404[^\n]*\n$/,
      );
      assert.match(measured.stdout, /Server Prometheus Metrics: none \(cannot read server metrics/);
    }
  },
);

tritonTest("the server stopped mid-level: exit 3, the levels measured are kept", async () => {
  for (const protocol of ["http", "grpc"]) {
    const own = await startTriton();
    try {
      let stopping: Promise<unknown> | undefined;
      const cli = await runCli([
        "-m",
        "slow",
        "-i",
        protocol,
        "-u",
        protocol === "http" ? own.http : own.grpc,
        "--concurrency-range",
        "2:8:2",
        "-p",
        "500",
      ], {
        timeoutMs: 30_000,
        // The first level is reported: stop the server while the second is measured.
        onStdout: (stdout) => {
          if (stdout.includes("Request concurrency: 2\n")) stopping ??= own.stop();
        },
      });
      await stopping;
      assertOneLineError(
        cli,
        3,
        /^error: No valid requests recorded .* requests failed, most with:/,
      );
      assert.match(cli.stderr, /(refused|reset|closed)/, cli.stderr);
      assert.match(cli.stdout, /Concurrency: 2, throughput: [\d.]+ infer\/sec/, cli.stdout);
    } finally {
      await own.stop();
    }
  }
});

tritonTest("the shared server stops on SIGTERM", async () => {
  await server!.stop();
});
