import assert from "node:assert/strict";
import { buildServeConfig } from "./serve_config.ts";
import { parseArgv } from "./args.ts";
import { OPTIONS } from "./options.ts";
import { config, usageErrors, warnings } from "./testdata/usage_errors.ts";

Deno.test("perf_analyzer's defaults apply", () => {
  const c = config("-m", "simple");
  assert.equal(c.model, "simple");
  assert.equal(c.url, "localhost:8000");
  assert.deepEqual(c.concurrency, { start: 1, end: 1, step: 1 });
  assert.equal(c.measurementIntervalMs, 5000);
  assert.equal(c.measurementMode, "time_windows");
  assert.equal(c.measurementRequestCount, 50);
  assert.equal(c.stabilityPercentage, 10);
  assert.equal(c.maxTrials, 10);
  assert.equal(c.percentile, undefined);
  assert.equal(c.batchSize, 1);
  assert.deepEqual(c.inputData, { perInput: new Map(), paths: [] });
  assert.equal(c.validationTolerance, 0);
  assert.equal(c.inputTensorFormat, "binary");
  assert.equal(c.stringLength, 128);
  assert.equal(c.verbose, 0);
});

Deno.test("the issue's example command line parses", () => {
  const c = config(
    "-m",
    "simple",
    "-u",
    "localhost:8000",
    "--concurrency-range",
    "1:8:2",
    "-f",
    "perf.csv",
    "--percentile",
    "95",
  );
  assert.deepEqual(c.concurrency, { start: 1, end: 8, step: 2 });
  assert.equal(c.latencyReportFile, "perf.csv");
  assert.equal(c.percentile, 95);
});

Deno.test("getopt spellings: --opt=value, -vv, repeated lists, headers, shapes", () => {
  const c = config(
    "-msimple",
    "--percentile=99",
    "-vv",
    "-H",
    "Authorization: Bearer x:y",
    "--header=X-Trace:1",
    "--shape",
    "IN:0:3,224",
    "--shape",
    "B:1",
    "-a",
  );
  assert.equal(c.model, "simple");
  assert.equal(c.percentile, 99);
  assert.equal(c.verbose, 2);
  assert.deepEqual(c.headers, { Authorization: "Bearer x:y", "X-Trace": "1" });
  assert.deepEqual([...c.shapes], [["IN:0", [3, 224]], ["B", [1]]]);
  assert.equal(c.async, true);
});

Deno.test("a header value with CR, LF or NUL is refused: it could inject headers", () => {
  for (const value of ["a\r\nX-Evil: 1", "a\nb", "a\0b"]) {
    assert.deepEqual(usageErrors(() => config("-m", "m", "-H", `X-Ok:${value}`)), [
      `Invalid value ${
        JSON.stringify(`X-Ok:${value}`)
      } for -H/--header: the value holds CR, LF or NUL`,
    ]);
  }
});

Deno.test("every problem is reported at once, naming option and value", () => {
  const errors = usageErrors(() =>
    config(
      "--concurrency-range",
      "4:1:0",
      "-p",
      "abc",
      "--percentile",
      "100",
      "--measurement-mode",
      "forever",
      "-b",
      "0",
    )
  );
  assert.deepEqual(errors, [
    "Option -m/--model-name is required",
    'Invalid value "4:1:0" for --concurrency-range: the step must be greater than 0',
    'Invalid value "100" for --percentile: expected -1 or an integer from 1 to 99',
    'Invalid value "forever" for --measurement-mode: expected one of time_windows, count_windows',
    'Invalid value "abc" for -p/--measurement-interval: expected an integer',
    'Invalid value "0" for -b/--batch-size: expected an integer >= 1',
  ]);
});

Deno.test("unknown options and missing values are usage errors", () => {
  assert.deepEqual(usageErrors(() => parseArgv(["--bogus", "stray", "-m"])), [
    'Unknown option "--bogus"',
    "Option -m/--model-name needs a value",
  ]);
  assert.deepEqual(usageErrors(() => parseArgv(["--async=yes"])), [
    'Option -a/--async takes no value but true, false, 1 or 0, got "yes"',
  ]);
  assert.deepEqual(usageErrors(() => parseArgv(["serve", "stray"])), [
    'Unexpected argument "stray"',
  ]);
});

Deno.test("sweep rules: open end needs a threshold; binary search needs both", () => {
  assert.match(
    usageErrors(() => config("-m", "x", "--concurrency-range", "1:0"))[0]!,
    /can not both be 0/,
  );
  assert.match(
    usageErrors(() => config("-m", "x", "--concurrency-range", "1:8", "--binary-search"))[0]!,
    /--binary-search needs/,
  );
  assert.equal(config("-m", "x", "--concurrency-range", "2:0:2", "-l", "50").concurrency.end, 0);
  assert.match(usageErrors(() => config("-m", "x", "--sync", "--async"))[0]!, /together/);
});

Deno.test("trace options: repeatable levels, integer bounds, Triton only", () => {
  assert.equal(config("-m", "x").trace, undefined);
  assert.deepEqual(
    config(
      "-m",
      "x",
      "-i",
      "grpc",
      "--trace-level",
      "TIMESTAMPS",
      "--trace-level=TENSORS",
      "--trace-rate",
      "0",
      "--trace-count",
      "-1",
      "--log-frequency",
      "50",
    ).trace,
    { levels: ["TIMESTAMPS", "TENSORS"], rate: 0, count: -1, logFrequency: 50 },
  );
  assert.deepEqual(config("-m", "x", "--trace-rate", "10").trace, {
    levels: [],
    rate: 10,
    count: undefined,
    logFrequency: undefined,
  });
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--trace-level",
        "timestamps",
        "--trace-rate",
        "-1",
        "--trace-count",
        "-2",
        "--log-frequency",
        "x",
      )
    ),
    [
      'Invalid value "timestamps" for --trace-level: expected one of OFF, TIMESTAMPS, TENSORS',
      'Invalid value "-1" for --trace-rate: expected an integer >= 0',
      'Invalid value "-2" for --trace-count: expected an integer >= -1',
      'Invalid value "x" for --log-frequency: expected an integer',
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--service-kind",
        "openai",
        "--endpoint",
        "v1/completions",
        "--trace-rate",
        "1",
      )
    ),
    ["Trace settings (--trace-rate) need --service-kind triton: they are a Triton extension"],
  );
});

Deno.test("--input-data sorts modes, per-input modes and paths; --validation-tolerance", () => {
  const c = config(
    "-m",
    "x",
    "--input-data",
    "zero",
    "--input-data",
    "ids:random:0:30521",
    "--input-data",
    "a.json",
    "--input-data",
    "mask:zero",
    "--input-data",
    "b.json",
    "--validation-tolerance",
    "1e-5",
  );
  assert.equal(c.inputData.mode, "zero");
  assert.deepEqual([...c.inputData.perInput], [
    ["ids", { mode: "random", range: { min: 0, max: 30521 } }],
    ["mask", { mode: "zero" }],
  ]);
  assert.deepEqual(c.inputData.paths, ["a.json", "b.json"]);
  assert.equal(c.validationTolerance, 1e-5);
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--input-data",
        "random",
        "--input-data",
        "zero",
        "--validation-tolerance",
        "-1",
      )
    ),
    [
      'Values "random" and "zero" of --input-data contradict each other',
      'Invalid value "-1" for --validation-tolerance: expected a number >= 0',
    ],
  );
  assert.deepEqual(usageErrors(() => config("-m", "x", "--input-data", "ids:random:a:9")), [
    'Invalid value "ids:random:a:9" for --input-data: expected NAME:random:MIN:MAX with numbers',
  ]);
});

Deno.test("subcommands, their options and help/version are recognised", () => {
  const serve = parseArgv(["serve", "--models", "m.yaml", "--http-port", "0"]);
  assert.equal(serve.command, "serve");
  assert.deepEqual(buildServeConfig(serve.options), {
    models: "m.yaml",
    host: "127.0.0.1",
    httpPort: 0,
    metricsPort: 8002,
    grpcPort: 8001,
    tfservingPort: 8500,
    grpcCertificateFile: undefined,
    grpcPrivateKeyFile: undefined,
    grpcClientCaFile: undefined,
    modelRepository: undefined,
    modelControlMode: "none",
    loadModels: [],
  });
  assert.deepEqual(
    usageErrors(() =>
      buildServeConfig(parseArgv(["serve", "--grpc-client-ca-file", "ca.pem"]).options)
    ),
    ["Option --grpc-client-ca-file needs --grpc-certificate-file (mutual TLS is TLS)"],
  );
  assert.deepEqual(usageErrors(() => parseArgv(["serve", "-m", "x"])), [
    'Option -m/--model-name does not apply to "inferperf serve"',
  ]);
  assert.deepEqual(usageErrors(() => parseArgv(["--http-port", "1"])), [
    'Option --http-port does not apply to "inferperf profile"',
  ]);
  assert.equal(parseArgv(["demo", "-p", "500"]).command, "demo");
  assert.equal(parseArgv(["--help"]).action, "help");
  assert.equal(parseArgv(["serve", "-h"]).action, "help");
  assert.equal(parseArgv(["--version"]).action, "version");
  assert.equal(parseArgv(["profile", "-m", "x"]).command, "profile");
});

Deno.test("--periodic-concurrency-range needs gRPC streaming and an export file", () => {
  const errors = usageErrors(() =>
    config("-m", "x", "--periodic-concurrency-range", "10:100:25", "--concurrency-range", "2")
  );
  assert.ok(
    errors.some((e) => /can not be used with --concurrency-range/.test(e)),
    errors.join("\n"),
  );
  assert.ok(
    errors.some((e) =>
      e.startsWith(
        "Option --periodic-concurrency-range needs -i grpc and --streaming and --profile-export-file",
      )
    ),
    errors.join("\n"),
  );
  assert.ok(errors.some((e) => /END - START must be a multiple of STEP/.test(e)));
  assert.deepEqual(warnings("-m", "x", "--request-period", "5"), [
    "Option --request-period applies to --periodic-concurrency-range only: ignored, as " +
    "perf_analyzer ignores it",
  ]);
});

Deno.test("--session-concurrency: OpenAI input data, one load mode, one thread", () => {
  const openai = ["-m", "x", "--service-kind", "openai", "--endpoint", "v1/chat/completions"];
  // genai-perf's command line: its --request-count and --stability-percentage are accepted.
  const c = config(
    ...openai,
    ...["--input-data", "in.json", "--request-count", "10", "--stability-percentage", "999"],
    ...["--session-concurrency", "2"],
  );
  assert.equal(c.sessionConcurrency, 2);
  assert.equal(config("-m", "x").sessionConcurrency, undefined);
  assert.deepEqual(usageErrors(() => config("-m", "x", "--session-concurrency", "2")), [
    "Option --session-concurrency needs --service-kind openai (chat sessions)",
    'Option --session-concurrency needs --input-data: a JSON file whose entries give each turn a "session_id"',
  ]);
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...openai,
        ...["--input-data", "in.json", "--session-concurrency", "0", "--concurrency-range", "2"],
        ...["--workers", "2"],
      )
    ),
    [
      "Options --concurrency-range, --session-concurrency can not be used together: each chooses a load mode",
      'Invalid value "0" for --session-concurrency: expected an integer >= 1',
      "Option --session-concurrency can not be used with --workers 2: each session's turns wait " +
      "for the previous answer, which one thread must see",
    ],
  );
});

Deno.test("the option table is consistent", () => {
  const names = new Set<string>();
  const shorts = new Set<string>();
  for (const o of OPTIONS) {
    assert.ok(!names.has(o.name), `duplicate --${o.name}`);
    names.add(o.name);
    if (o.short) {
      assert.ok(!shorts.has(o.short), `duplicate -${o.short}`);
      shorts.add(o.short);
    }
    assert.match(o.help, /^[A-Z].*\.$/, `help of --${o.name} is a sentence`);
  }
  // Every perf_analyzer option: perf_analyzer_options_test.ts.
});

Deno.test("open-loop modes: rate ranges are floats, modes exclude each other", () => {
  const c = config(
    "-m",
    "x",
    "--request-rate-range",
    "0.5:2.5:0.5",
    "--request-distribution",
    "poisson",
  );
  assert.equal(c.loadMode, "request_rate");
  assert.deepEqual(c.requestRate, { start: 0.5, end: 2.5, step: 0.5 });
  assert.equal(c.requestDistribution, "poisson");
  assert.equal(c.maxInflight, 1000);
  assert.equal(c.sendBatchMs, 0.5);
  assert.equal(c.stallTimeoutMs, 300_000);
  assert.equal(c.maxSendLagMs, 1);
  // perf_analyzer only warns of a late client; an explicit bound fails the run.
  assert.equal(c.sendLagFails, false);
  const bound = ["-m", "x", "--request-rate-range", "9", "--max-send-lag", "2"];
  assert.equal(config(...bound).sendLagFails, true);
  assert.equal(config(...bound).maxSendLagMs, 2);
  assert.equal(config(...bound, "--ignore-send-lag").sendLagFails, false);
  assert.equal(config("-m", "x").loadMode, "concurrency");
  assert.equal(config("-m", "x", "--request-intervals", "i.txt").loadMode, "custom_intervals");
  // AIPerf's several models: -m A,B for --service-kind openai only (perf_analyzer's -m is one name).
  const OPENAI = ["--service-kind", "openai", "--endpoint", "v1/chat/completions"];
  const two = config("-m", "a,b", ...OPENAI);
  assert.equal(two.model, "a");
  assert.deepEqual(two.models, { names: ["a", "b"], selection: "round_robin" });
  assert.deepEqual(
    config("-m", "a,b", ...OPENAI, "--model-selection-strategy", "random").models,
    { names: ["a", "b"], selection: "random" },
  );
  assert.equal(config("-m", "a,b").model, "a,b");
  assert.equal(config("-m", "a,b").models, undefined);
  assert.deepEqual(
    usageErrors(() => config("-m", "a,b", ...OPENAI, "--workers", "2")),
    [
      "Several models (-m A,B) can not be used with --workers 2: the threads' records do not carry each request's model",
    ],
  );
  // AIPerf's --benchmark-duration and --benchmark-grace-period (default 30 s).
  const timed = config("-m", "x", "--benchmark-duration", "2.5");
  assert.deepEqual([timed.benchmarkDurationMs, timed.benchmarkGraceMs], [2500, 30_000]);
  assert.equal(config("-m", "x").benchmarkDurationMs, 0);
  assert.equal(
    config("-m", "x", "--benchmark-duration", "1", "--benchmark-grace-period", "0")
      .benchmarkGraceMs,
    0,
  );
  assert.deepEqual(
    usageErrors(() =>
      config("-m", "x", "--benchmark-duration", "1", "--request-count", "9", "--workers", "2")
    ),
    [
      "Option --benchmark-duration can not be used with --request-count: each bounds the level's one window",
      "Option --benchmark-duration can not be used with --workers 2: the grace period cancels requests on this thread only",
    ],
  );
  assert.deepEqual(warnings("-m", "x", "--benchmark-grace-period", "1"), [
    "--benchmark-grace-period applies to --benchmark-duration only: ignored",
  ]);
  // AIPerf's request cancellation: a percentage and a delay in seconds.
  assert.equal(config("-m", "x").cancellation, undefined);
  assert.deepEqual(
    config("-m", "x", "--request-cancellation-rate", "25", "--request-cancellation-delay", "0.5")
      .cancellation,
    { percent: 25, delayMs: 500 },
  );
  assert.deepEqual(usageErrors(() => config("-m", "x", "--request-cancellation-rate", "101")), [
    'Invalid value "101" for --request-cancellation-rate: expected a percentage from 0 to 100',
  ]);
  assert.deepEqual(warnings("-m", "x", "--request-cancellation-delay", "1"), [
    "--request-cancellation-delay without --request-cancellation-rate: no request is cancelled",
  ]);
  // AIPerf's --request-rate R --concurrency C (perf_analyzer refuses the pair): a capped open loop.
  const capped = config("-m", "x", "--concurrency", "2", "--request-rate", "5");
  assert.equal(capped.loadMode, "request_rate");
  assert.deepEqual(capped.requestRate, { start: 5, end: 1, step: 1 });
  assert.equal(capped.maxInflight, 2);
  assert.equal(capped.concurrencyCap, 2);
  assert.equal(config("-m", "x", "--request-rate-range", "5").concurrencyCap, undefined);
  assert.deepEqual(
    usageErrors(() => config("-m", "x", "--concurrency-range", "2:8", "--request-rate-range", "5")),
    [
      'Invalid value "2:8" for --concurrency-range with --request-rate-range: expected one integer >= 1, the cap on requests in flight (a range sweeps closed loops, not a cap)',
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--concurrency-range",
        "2",
        "--request-rate-range",
        "5",
        "--max-inflight",
        "9",
      )
    ),
    [
      "Options --max-inflight and --concurrency-range with --request-rate-range can not be used together: both cap the requests in flight",
    ],
  );
  assert.deepEqual(usageErrors(() => config("-m", "x", "--request-rate-range", "5:0")), [
    "The end of the --request-rate-range and -l/--latency-threshold can not both be 0: the sweep would never stop",
  ]);
  assert.deepEqual(
    usageErrors(() => config("-m", "x", "--request-intervals", "i.txt", "--binary-search")),
    ["Option --binary-search needs an end in --request-rate-range and a -l/--latency-threshold"],
  );
  const fixed = config("-m", "x", "--fixed-schedule", "--input-data", "trace.json");
  assert.equal(fixed.fixedSchedule, true);
  assert.equal(fixed.loadMode, "custom_intervals");
  assert.equal(config("-m", "x").fixedSchedule, false);
  assert.deepEqual(
    usageErrors(() =>
      config("-m", "x", "--fixed-schedule", "--request-rate-range", "5", "-b", "2")
    ),
    [
      "Options --request-rate-range, --fixed-schedule can not be used together: each chooses a load mode",
      "Option --fixed-schedule sends one input-data step per request: it can not be used with -b 2",
    ],
  );
  assert.match(
    usageErrors(() => config("-m", "x", "--max-inflight", "0", "--max-send-lag", "0")).join("\n"),
    /--max-inflight: expected an integer >= 1\n.*--max-send-lag: expected a number > 0/,
  );
  assert.match(
    usageErrors(() => config("-m", "x", "--send-batching", "-1", "--stall-timeout", "-5")).join(
      "\n",
    ),
    /--send-batching: expected a number >= 0\n.*--stall-timeout: expected an integer >= 0/,
  );
});

Deno.test("sequence options have perf_analyzer's defaults and are checked", () => {
  assert.deepEqual(config("-m", "x").sequences, {
    count: 4,
    length: 20,
    variationPct: 20,
    idRange: { start: 1, end: 4294967295 },
    serial: false,
  });
  const c = config(
    "-m",
    "x",
    "--num-of-sequences",
    "8",
    "--sequence-length",
    "5",
    "--sequence-length-variation",
    "0",
    "--sequence-id-range",
    "100:199",
    "--serial-sequences",
  );
  assert.deepEqual(c.sequences, {
    count: 8,
    length: 5,
    variationPct: 0,
    idRange: { start: 100, end: 199 },
    serial: true,
  });
  assert.deepEqual(config("-m", "x", "--sequence-id-range", "7").sequences.idRange, {
    start: 7,
    end: 4294967295,
  });
  assert.deepEqual(usageErrors(() => config("-m", "x", "--sequence-id-range", "9:3")), [
    'Invalid value "9:3" for --sequence-id-range: expected START[:END] with 1 <= START <= END <= 4294967295',
  ]);
});

Deno.test("exporters: export file, metrics and report options", async () => {
  const defaults = config("-m", "x");
  assert.equal(defaults.profileExportFile, undefined);
  assert.equal(defaults.collectMetrics, false);
  assert.equal(defaults.metricsIntervalMs, 1000);
  assert.equal(defaults.reportHtml, undefined);
  assert.equal(defaults.summaryJson, undefined);
  const metrics = config("-m", "x", "-u", "http://gpu-box:9000", "--collect-metrics");
  assert.equal(metrics.metricsUrl, "gpu-box:8002/metrics");
  const given = config(
    "-m",
    "x",
    "--collect-metrics",
    "--metrics-url",
    "h:1/m",
    "--metrics-interval",
    "250",
  );
  assert.equal(given.metricsUrl, "h:1/m");
  assert.equal(given.metricsIntervalMs, 250);
  assert.equal(given.requireMetrics, false);
  assert.equal(config("-m", "x", "--collect-metrics", "--require-metrics").requireMetrics, true);
  assert.deepEqual(usageErrors(() => config("-m", "x", "--require-metrics")), [
    "Option --require-metrics needs --collect-metrics",
  ]);
  const files = config("-m", "x", "--report-html", "r.html", "--summary-json", "s.json");
  assert.deepEqual([files.reportHtml, files.summaryJson], ["r.html", "s.json"]);

  const dir = await Deno.makeTempDir();
  try {
    const existing = `${dir}/profile.json`;
    await Deno.writeTextFile(existing, "{}");
    assert.deepEqual(
      usageErrors(() =>
        config("-m", "x", "--profile-export-file", existing, "--metrics-url", "ftp://h/m")
      ),
      [
        `File "${existing}" given to --profile-export-file already exists; choose another name or add --overwrite`,
        'Invalid metrics URL "ftp://h/m": only http and https are supported',
      ],
    );
    const overwrite = config("-m", "x", "--profile-export-file", existing, "--overwrite");
    assert.equal(overwrite.profileExportFile, existing);
    assert.equal(overwrite.overwrite, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commands: report, profile --config; comma-lists and dicts collect every use", () => {
  const report = parseArgv(["report", "--checkpoint-directory", "d", "-f", "r.csv"]);
  assert.equal(report.command, "report");
  assert.deepEqual(Object.fromEntries(report.options), {
    "checkpoint-directory": "d",
    "latency-report-file": "r.csv",
  });
  const sweep = parseArgv([
    "profile",
    "--config",
    "s.yaml",
    "--profile-models",
    "a,b",
    "--profile-models=c",
    "--constraints",
    "max-p99-latency=20",
    "--constraints",
    "min-throughput=5",
  ]);
  assert.equal(sweep.command, "profile");
  assert.deepEqual(Object.fromEntries(sweep.options), {
    config: "s.yaml",
    "profile-models": ["a,b", "c"],
    constraints: ["max-p99-latency=20", "min-throughput=5"],
  });
  assert.throws(() => parseArgv(["serve", "--profile-models", "a"]), /does not apply/);
});

Deno.test("--workers: 1 by default; what can not be split is refused, every error at once", () => {
  assert.equal(config("-m", "x").workers, 1);
  assert.equal(config("-m", "x", "--workers", "2", "--request-rate-range", "100").workers, 2);
  assert.deepEqual(usageErrors(() => config("-m", "x", "--workers", "0")), [
    'Invalid value "0" for --workers: expected an integer >= 1',
  ]);
  assert.deepEqual(
    usageErrors(() =>
      config(
        ..."-m x --workers 3 --shared-memory system --profile-export-file p.json".split(" "),
        ..."--request-rate-range 100 --max-inflight 2".split(" "),
      )
    ),
    [
      "Option --workers 3 can not be used with --shared-memory: each worker would need its own " +
      "regions and request slots",
      "Option --workers 3 can not be used with --max-inflight 2: each worker needs at least 1 in " +
      "flight",
    ],
  );
  assert.equal(config(..."-m x --workers 2 --profile-export-file p.json".split(" ")).workers, 2);
  assert.deepEqual(
    usageErrors(() =>
      config(
        ..."-m x --workers 2 -i grpc --streaming --profile-export-file p.json".split(" "),
        ..."--periodic-concurrency-range 2:4:2".split(" "),
      )
    ),
    [
      "Option --workers 2 can not be used with --periodic-concurrency-range: its sets of " +
      "requests wait for each other's responses, which one thread must see",
    ],
  );
  // A single thread takes them all, as before.
  config(..."-m x --workers 1 --shared-memory system --profile-export-file p.json".split(" "));
});
