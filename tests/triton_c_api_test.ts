/**
 * --service-kind triton_c_api against the real Triton core library
 * (../shared/tritonserver, or $TRITONSERVER_DIR) and the identity models of
 * fixtures/triton_c_api/models. The CLI runs in a child process with
 * --allow-ffi, which the test task does not grant.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  assertTritonCount,
  type CliOptions,
  profileSlowModel,
  runCli,
  within,
} from "./_helpers.ts";
import { TRITON_DIR } from "./_triton.ts";
import { parseProfileExport } from "../lib/report/export.ts";

const FIXTURES = new URL("../fixtures/triton_c_api/", import.meta.url).pathname;
const MODELS = `${FIXTURES}models`;
const present = existsSync(`${TRITON_DIR}/lib/libtritonserver.so`);
if (!present) {
  console.warn(
    `tests/triton_c_api_test.ts skipped: no ${TRITON_DIR}/lib/libtritonserver.so ` +
      "(set TRITONSERVER_DIR to a Triton install)",
  );
}
const ignore = !present;

/** The binary's permissions plus FFI. */
const WITH_FFI = ["--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-sys"]
  .concat("--allow-ffi");
const C_API = [
  "--service-kind",
  "triton_c_api",
  "--triton-server-directory",
  TRITON_DIR,
  "--model-repository",
  MODELS,
];

function capi(args: string[], options: CliOptions = {}) {
  return runCli([...C_API, ...args], { permissions: WITH_FFI, ...options });
}

/** `count` requests of `model` with the input and validation data of the fixture `data`. */
function withData(model: string, data: string, count: number, extra: string[] = []) {
  const input = ["--input-data", `${FIXTURES}${data}`, "--request-count", String(count)];
  return capi(["-m", model, ...extra, ...input]);
}

/** The number on the report line that starts with `label` (the first such line). */
function figure(stdout: string, label: string): number {
  const match = new RegExp(`^\\s*${label}: ([\\d.]+)`, "m").exec(stdout);
  assert.ok(match, `no "${label}" line in:\n${stdout}`);
  return Number(match[1]);
}

Deno.test({
  name: "C API: echo validated; server statistics count what the client sent",
  ignore,
  async fn() {
    const cli = await withData("identity_fp32", "fp32_echo.json", 300);
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    assert.match(
      cli.stdout,
      /^server is alive!\n\*\*\* Measurement Settings \*\*\*\n {2}Batch size: 1\n {2}Service Kind: TRITON_C_API\n/,
    );
    assert.equal(figure(cli.stdout, "Request count"), 300);
    assertTritonCount(figure(cli.stdout, "Inference count"), 300, { what: "inferences" });
    assertTritonCount(figure(cli.stdout, "Successful request count"), 300, { what: "requests" });
    // perf_analyzer has no client library times in-process: that line stays blank.
    assert.match(cli.stdout, /p99 latency: \d+ usec\n {4}\n {2}Server: \n/);
  },
});

Deno.test({
  name: "C API: an output that differs from the validation data fails the request",
  ignore,
  async fn() {
    const cli = await withData("identity_fp32", "fp32_wrong.json", 10);
    assert.equal(cli.code, 3, cli.stderr + cli.stdout);
    assert.match(cli.stderr, /Output doesn't match expected output: OUTPUT0 .* expected 1, got 0/);
  },
});

Deno.test({
  name: "C API: BYTES and batched INT32 with a variable dimension echo",
  ignore,
  async fn() {
    const bytes = await withData("identity_bytes", "bytes_echo.json", 40);
    assert.equal(bytes.code, 0, bytes.stderr + bytes.stdout);
    assertTritonCount(figure(bytes.stdout, "Successful request count"), 40, { what: "BYTES" });
    const int32 = await withData("identity_int32", "int32_echo.json", 40, ["-b", "2"]);
    assert.equal(int32.code, 0, int32.stderr + int32.stdout);
    assertTritonCount(figure(int32.stdout, "Successful request count"), 40, { what: "INT32" });
    assertTritonCount(figure(int32.stdout, "Inference count"), 80, { last: 2, what: "INT32 x 2" });
  },
});

Deno.test({
  name: "C API: --shared-memory system (perf_analyzer's QA case): inputs read in place, validated",
  ignore,
  async fn() {
    // perf_analyzer's command line: -t 1 -p2000 -b 1 --shared-memory=system, and async.
    for (const extra of [[], ["-a"]]) {
      const cli = await withData("identity_fp32", "fp32_echo.json", 50, [
        ...["-t", "1", "-b", "1", "--shared-memory=system", ...extra],
      ]);
      assert.equal(cli.code, 0, cli.stderr + cli.stdout);
      assertTritonCount(figure(cli.stdout, "Successful request count"), 50, { what: "FP32" });
    }
    const bytes = await withData("identity_bytes", "bytes_echo.json", 20, [
      ...["--shared-memory", "system", "--concurrency-range", "4"],
    ]);
    assert.equal(bytes.code, 0, bytes.stderr + bytes.stdout);
    assertTritonCount(figure(bytes.stdout, "Successful request count"), 20, {
      last: 4,
      what: "BYTES at 4",
    });
    // A wrong expectation still fails: the outputs are the server's, not the input region's.
    const wrong = await withData("identity_fp32", "fp32_wrong.json", 10, [
      ...["--shared-memory", "system"],
    ]);
    assert.equal(wrong.code, 3, wrong.stderr + wrong.stdout);
  },
});

Deno.test({
  name: "C API --shared-memory system: the core writes each output into its region",
  ignore,
  async fn() {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...WITH_FFI, new URL("./_c_api_regions.ts", import.meta.url).pathname]
        .concat(TRITON_DIR, MODELS),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    for (const [i, { inputs, decoded }] of report.answers.entries()) {
      // perf_analyzer's sizes at -b 2: OUTPUT0 (dims [-1]) 2 x --output-shared-memory-size 64,
      // OUTPUT1 (4 INT32) 2 x 16 bytes; identity's outputs are its inputs, written in place.
      const [output0, output1] = report.regions[i];
      assert.deepEqual([output0.name, output0.size, output1.name, output1.size], [
        ...["OUTPUT0", 128, "OUTPUT1", 32],
      ]);
      assert.deepEqual(output0.bytes, [...inputs[0], ...new Array(128 - 40).fill(0)]);
      assert.deepEqual(output1.bytes, inputs[1]);
      // Decoded (validation, export) from the regions, as without the option.
      assert.deepEqual(decoded, [
        { name: "OUTPUT0", bytes: inputs[0] },
        { name: "OUTPUT1", bytes: inputs[1] },
      ]);
    }
    assert.notDeepEqual(report.regions[0][0].bytes, report.regions[1][0].bytes, "own regions");
  },
});

Deno.test({
  name:
    "C API --shared-memory system: outputs exported, and one that does not fit fails in one line",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const cli = await withData("identity_fp32", "fp32_echo.json", 20, [
        ...["--shared-memory", "system", "--profile-export-file", `${dir}/export.json`],
      ]);
      assert.equal(cli.code, 0, cli.stderr + cli.stdout);
      const exported = parseProfileExport(await Deno.readTextFile(`${dir}/export.json`));
      for (const request of exported.experiments[0].requests) {
        assert.deepEqual(request.response_outputs[0].OUTPUT0, request.request_inputs.INPUT0);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    // BYTES is of variable size: its region is --output-shared-memory-size; ["ab", "cde"] needs
    // 13 bytes. perf_analyzer's allocator fails the output with this message.
    const small = await withData("identity_bytes", "bytes_echo.json", 3, [
      ...["--shared-memory", "system", "--output-shared-memory-size", "8"],
    ]);
    assert.equal(small.code, 3, small.stderr + small.stdout);
    assert.equal(
      small.stderr,
      "error: No valid requests recorded within time interval. Please use a larger time window. " +
        "3 requests failed, most with: shared memory size specified with the request for output " +
        "'OUTPUT0' (8 bytes) should be at least 13 bytes to hold the results\n",
    );
    const fits = await withData("identity_bytes", "bytes_echo.json", 3, [
      ...["--shared-memory", "system", "--output-shared-memory-size", "13"],
    ]);
    assert.equal(fits.code, 0, fits.stderr + fits.stdout);
  },
});

Deno.test({
  name: "C API: one 10 ms instance gives ~100 infer/s and N x 10 ms at concurrency N",
  ignore,
  async fn() {
    const { column, delayUs } = await profileSlowModel(C_API, {
      model: "identity_delay",
      permissions: WITH_FFI,
    });
    within(column(4, "Server Queue"), 3 * delayUs, 0.2, "queue at 4");
  },
});

Deno.test({
  name: "C API: many requests in flight, and open-loop Poisson sends",
  ignore,
  async fn() {
    const closed = await capi([
      "-m",
      "identity_fp32",
      "--concurrency-range",
      "8",
      "--request-count",
      "2000",
    ]);
    assert.equal(closed.code, 0, closed.stderr + closed.stdout);
    assertTritonCount(figure(closed.stdout, "Successful request count"), 2000, {
      last: 8,
      what: "closed loop at 8",
    });
    const open = await capi([
      "-m",
      "identity_delay",
      "--request-rate-range",
      "50",
      "--request-distribution",
      "poisson",
      "--request-count",
      "40",
      // A start-up hiccup in 40 sends is not what this test is about.
      "--ignore-send-lag",
    ]);
    assert.equal(open.code, 0, open.stderr + open.stdout);
    assert.match(open.stdout, /Request Rate: 50 inference requests per seconds/);
    assertTritonCount(figure(open.stdout, "Successful request count"), 40, { what: "open loop" });
  },
});

Deno.test({
  name: "C API: sequences carry their correlation id and start/end flags",
  ignore,
  async fn() {
    // Triton refuses a request without id or a first request without START, and
    // holds each slot (4 instances) until its sequence ENDs.
    const cli = await capi([
      "-m",
      "identity_sequence",
      "--concurrency-range",
      "2",
      "--num-of-sequences",
      "4",
      "--sequence-length",
      "5",
      "--request-count",
      "60",
    ]);
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    assertTritonCount(figure(cli.stdout, "Successful request count"), 60, {
      last: 2,
      what: "sequences",
    });
  },
});

Deno.test({
  name: "C API: a decoupled model's responses end at the final flag",
  ignore,
  async fn() {
    const cli = await capi(["-m", "identity_decoupled", "--request-count", "50"]);
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    assert.equal(figure(cli.stdout, "Response Throughput"), figure(cli.stdout, "Throughput"));
    assertTritonCount(figure(cli.stdout, "Successful request count"), 50, { what: "decoupled" });
  },
});

Deno.test({
  name: "C API: Ctrl-C finishes the window, reports, stops the server and exits 130",
  ignore,
  async fn() {
    const cli = await capi(
      ["-m", "identity_fp32", "--concurrency-range", "2", "-p", "1000", "-s", "0.01"],
      { signalAt: "Service Kind", timeoutMs: 30_000 },
    );
    assert.equal(cli.code, 130, cli.stderr + cli.stdout);
    assert.match(cli.stdout, /Request concurrency: 2/);
    assert.match(cli.stdout, /Interrupted/);
  },
});

Deno.test({
  name: "C API: setup errors are one line naming what to fix, with main.ts's exit codes",
  ignore,
  async fn() {
    // 1: what the user fixes (options, permission, paths, input data); 99: a model the server
    // refuses to load, as over HTTP and gRPC.
    const cases: Array<[string[], number, RegExp, string[]?]> = [
      [["-m", "identity_fp32"], 1, /--allow-ffi/, ["--allow-read", "--allow-env"]],
      [
        ["-m", "identity_broken"],
        99,
        /Model "identity_broken" failed to load: .*equal input\/output/,
      ],
      [["-m", "no_such_model"], 99, /Model "no_such_model" failed to load: .*no_such_model/],
      [
        ["-m", "identity_fp32", "--triton-server-directory", "/nonexistent"],
        1,
        /--triton-server-directory \/nonexistent: no lib\/libtritonserver\.so there/,
      ],
      [
        ["-m", "identity_fp32", "--model-repository", "/nonexistent"],
        1,
        /--model-repository: \/nonexistent is not a directory/,
      ],
      [
        ["-m", "identity_fp32", "--workers", "2"],
        1,
        /--workers 2 can not be used .* one per process/,
      ],
      [
        ["-m", "identity_fp32", "--input-data", `${FIXTURES}int32_echo.json`],
        1,
        /INPUT1|INPUT0/,
      ],
    ];
    for (const [args, code, message, permissions] of cases) {
      const cli = await capi(args, permissions ? { permissions } : {});
      assert.equal(cli.code, code, `${args.join(" ")}: ${cli.stderr}`);
      const first = cli.stderr.split("\n")[0];
      assert.match(first, message, args.join(" "));
      assert.match(first, /^error: /, args.join(" "));
    }
    const missing = await runCli(["-m", "x", "--service-kind", "triton_c_api"]);
    assert.equal(missing.code, 1, missing.stderr);
    // --triton-server-directory defaults to /opt/tritonserver, as in perf_analyzer.
    assert.doesNotMatch(missing.stderr, /needs --triton-server-directory/);
    assert.match(missing.stderr, /needs --model-repository DIR/);
  },
});

/**
 * A decoupled backend of our own (tests/fixtures/triton_c_api_backend), compiled into a model
 * directory, where Triton looks for a backend first: each answer is its input, a response
 * without outputs, then the final flag alone (a null response), which the identity backend
 * never sends.
 */
async function emptyResponsesRepository(dir: string): Promise<string | { reason: string }> {
  const model = `${dir}/models/empty_responses`;
  await Deno.mkdir(`${model}/1`, { recursive: true });
  await Deno.writeTextFile(
    `${model}/config.pbtxt`,
    'backend: "empty_responses"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n' +
      'input [{ name: "INPUT0", data_type: TYPE_FP32, dims: [16] }]\n' +
      'output [{ name: "OUTPUT0", data_type: TYPE_FP32, dims: [16] }]\n',
  );
  const source = new URL("./fixtures/triton_c_api_backend/empty_responses.cc", import.meta.url);
  try {
    const built = await new Deno.Command("g++", {
      args: [
        ...["-shared", "-fPIC", "-O1", "-D_COMPILING_TRITONBACKEND", `-I${TRITON_DIR}/include`],
        ...["-o", `${model}/1/libtriton_empty_responses.so`, source.pathname],
        ...[`-L${TRITON_DIR}/lib`, "-ltritonserver", `-Wl,-rpath,${TRITON_DIR}/lib`],
      ],
    }).output();
    if (!built.success) return { reason: new TextDecoder().decode(built.stderr).trim() };
  } catch (error) {
    return { reason: `no g++ (${(error as Error).message})` };
  }
  return `${dir}/models`;
}

Deno.test({
  name:
    "C API export: responses without outputs and the null final response, as perf_analyzer records them",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const models = await emptyResponsesRepository(dir);
      if (typeof models !== "string") {
        console.warn(
          `C API empty responses skipped: the test backend did not build: ${models.reason}`,
        );
        return;
      }
      const cli = await runCli([
        ...["--service-kind", "triton_c_api", "--triton-server-directory", TRITON_DIR],
        ...["--model-repository", models, "-m", "empty_responses", "--request-count", "4"],
        ...["--profile-export-file", `${dir}/export.json`],
      ], { permissions: WITH_FFI });
      assert.equal(cli.code, 0, cli.stderr + cli.stdout);
      const exported = parseProfileExport(await Deno.readTextFile(`${dir}/export.json`));
      const requests = exported.experiments[0].requests;
      assert.equal(requests.length, 4);
      for (const request of requests) {
        // perf_analyzer's C API backend makes a result of every response callback, the null one
        // too, and writes each output asked for that a response lacks as "".
        assert.equal(request.response_timestamps.length, 3);
        const [first, empty, last] = request.response_outputs;
        assert.deepEqual(first.OUTPUT0, request.request_inputs.INPUT0);
        assert.deepEqual(empty, { OUTPUT0: "" });
        assert.deepEqual(last, { OUTPUT0: "" });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
