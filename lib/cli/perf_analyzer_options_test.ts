/**
 * Every option of perf_analyzer's command-line parser, in every spelling its
 * getopt_long takes, is accepted with its meaning (a plan field checked) or
 * refused with one line. The options come from testdata/perf_analyzer_options.json
 * (tools/perf_analyzer_options.ts extracts them from command_line_parser.cc):
 * an option added there fails here until it has a case below.
 */
import assert from "node:assert/strict";
import type { ProfilePlan } from "../profile/plan.ts";
import { UsageError } from "../types/errors.ts";
import { parseArgv } from "./args.ts";
import { buildProfileConfig } from "./config.ts";
import { OPTIONS } from "./options.ts";
import facts from "./testdata/perf_analyzer_options.json" with { type: "json" };

interface Accepted {
  /** Other options the option needs (e.g. -i grpc). */
  with?: string[];
  /** The value given (options that take one). */
  value?: string;
  /** The plan with the option, and the plan of `with` alone. */
  check(plan: ProfilePlan, base: () => ProfilePlan): void;
}
interface Refused {
  with?: string[];
  value?: string;
  refused: RegExp;
}
/** Handled by another part of the work: the reason. */
interface Pending {
  pending: string;
}
type Case = Accepted | Refused | Pending;

const NOWHERE = "/nonexistent-inferperf-test";
const unchanged = (plan: ProfilePlan, base: () => ProfilePlan) => assert.deepEqual(plan, base());
const GRPC = ["-i", "grpc"];
const HTTPS = ["-u", "https://localhost:8443"];
const C_API = ["--service-kind", "triton_c_api", "--model-repository", "models"];
const PERIODIC = [...GRPC, "--streaming", "--profile-export-file", `${NOWHERE}/p.json`];

const LONG: Record<string, Case> = {
  "streaming": { with: GRPC, check: (p) => assert.ok(p.streaming && p.async) },
  // perf_analyzer's sender threads; inferperf sends from one event loop.
  "max-threads": { value: "8", check: unchanged },
  "sequence-length": { value: "30", check: (p) => assert.equal(p.sequences.length, 30) },
  "percentile": { value: "95", check: (p) => assert.equal(p.percentile, 95) },
  "data-directory": {
    value: "data",
    check: (p) => assert.deepEqual(p.inputData.paths, ["data"]),
  },
  "shape": { value: "IN:3,4", check: (p) => assert.deepEqual(p.shapes.get("IN"), [3, 4]) },
  "measurement-interval": {
    value: "500",
    check: (p) => assert.equal(p.measurementIntervalMs, 500),
  },
  "concurrency-range": {
    value: "2:8:2",
    check: (p) => assert.deepEqual(p.concurrency, { start: 2, end: 8, step: 2 }),
  },
  "latency-threshold": { value: "50", check: (p) => assert.equal(p.latencyThresholdMs, 50) },
  "stability-percentage": {
    value: "20",
    check: (p) => assert.equal(p.stabilityPercentage, 20),
  },
  "max-trials": { value: "5", check: (p) => assert.equal(p.maxTrials, 5) },
  "input-data": { value: "zero", check: (p) => assert.equal(p.inputData.mode, "zero") },
  "string-length": { value: "16", check: (p) => assert.equal(p.stringLength, 16) },
  "string-data": { value: "abc", check: (p) => assert.equal(p.stringData, "abc") },
  "async": { check: (p) => assert.equal(p.async, true) },
  // Synchronous calls are the default; --sync only forbids --async.
  "sync": { check: unchanged },
  "request-rate-range": {
    value: "10:20:5",
    check: (p) => {
      assert.equal(p.loadMode, "request_rate");
      assert.deepEqual(p.requestRate, { start: 10, end: 20, step: 5 });
    },
  },
  "num-of-sequences": { value: "8", check: (p) => assert.equal(p.sequences.count, 8) },
  "binary-search": {
    with: ["--concurrency-range", "1:8", "-l", "10"],
    check: (p) => assert.equal(p.binarySearch, true),
  },
  "request-distribution": {
    with: ["--request-rate-range", "10"],
    value: "poisson",
    check: (p) => assert.equal(p.requestDistribution, "poisson"),
  },
  "request-intervals": {
    value: "gaps.txt",
    check: (p) => {
      assert.equal(p.loadMode, "custom_intervals");
      assert.equal(p.requestIntervals, "gaps.txt");
    },
  },
  "shared-memory": { value: "system", check: (p) => assert.equal(p.sharedMemory, "system") },
  "output-shared-memory-size": {
    value: "4096",
    check: (p) => assert.equal(p.outputSharedMemorySize, 4096),
  },
  "service-kind": { value: "tfserving", check: (p) => assert.equal(p.serviceKind, "tfserving") },
  "model-signature-name": {
    with: ["--service-kind", "tfserving"],
    value: "predict",
    check: (p) => assert.equal(p.modelSignatureName, "predict"),
  },
  "grpc-compression-algorithm": {
    with: GRPC,
    value: "gzip",
    check: (p) => assert.equal(p.grpcCompression, "gzip"),
  },
  "measurement-mode": {
    value: "count_windows",
    check: (p) => assert.equal(p.measurementMode, "count_windows"),
  },
  "measurement-request-count": {
    value: "100",
    check: (p) => assert.equal(p.measurementRequestCount, 100),
  },
  "triton-server-directory": {
    with: C_API,
    value: "/opt/triton",
    check: (p) => assert.equal(p.tritonServerDirectory, "/opt/triton"),
  },
  "model-repository": {
    with: ["--service-kind", "triton_c_api"],
    value: "repo",
    check: (p) => assert.equal(p.modelRepository, "repo"),
  },
  "sequence-id-range": {
    value: "5:100",
    check: (p) => assert.deepEqual(p.sequences.idRange, { start: 5, end: 100 }),
  },
  "ssl-grpc-use-ssl": { with: GRPC, check: (p) => assert.ok(p.grpcSsl) },
  "ssl-grpc-root-certifications-file": {
    with: [...GRPC, "--ssl-grpc-use-ssl"],
    value: "ca.pem",
    check: (p) => assert.equal(p.grpcSsl?.rootCertificatesFile, "ca.pem"),
  },
  "ssl-grpc-private-key-file": {
    with: [...GRPC, "--ssl-grpc-use-ssl", "--ssl-grpc-certificate-chain-file", "c.pem"],
    value: "k.pem",
    check: (p) => assert.equal(p.grpcSsl?.privateKeyFile, "k.pem"),
  },
  "ssl-grpc-certificate-chain-file": {
    with: [...GRPC, "--ssl-grpc-use-ssl", "--ssl-grpc-private-key-file", "k.pem"],
    value: "c.pem",
    check: (p) => assert.equal(p.grpcSsl?.certificateChainFile, "c.pem"),
  },
  "ssl-https-verify-peer": {
    with: HTTPS,
    value: "0",
    check: (p) => assert.equal(p.httpsSsl.verifyPeer, false),
  },
  "ssl-https-verify-host": {
    with: HTTPS,
    value: "0",
    check: (p) => assert.equal(p.httpsSsl.verifyHost, false),
  },
  "ssl-https-ca-certificates-file": {
    with: HTTPS,
    value: "ca.pem",
    check: (p) => assert.equal(p.httpsSsl.caCertificatesFile, "ca.pem"),
  },
  "ssl-https-client-certificate-file": {
    with: [...HTTPS, "--ssl-https-private-key-file", "k.pem"],
    value: "c.pem",
    check: (p) => assert.equal(p.httpsSsl.clientCertificateFile, "c.pem"),
  },
  "ssl-https-client-certificate-type": {
    with: HTTPS,
    value: "DER",
    check: (p) => assert.equal(p.httpsSsl.clientCertificateType, "DER"),
  },
  "ssl-https-private-key-file": {
    with: [...HTTPS, "--ssl-https-client-certificate-file", "c.pem"],
    value: "k.pem",
    check: (p) => assert.equal(p.httpsSsl.privateKeyFile, "k.pem"),
  },
  "ssl-https-private-key-type": {
    with: HTTPS,
    value: "DER",
    check: (p) => assert.equal(p.httpsSsl.privateKeyType, "DER"),
  },
  "verbose-csv": { check: (p) => assert.equal(p.verboseCsv, true) },
  "enable-mpi": { check: (p) => assert.ok(p.mpi) },
  "trace-level": {
    value: "TIMESTAMPS",
    check: (p) => assert.deepEqual(p.trace?.levels, ["TIMESTAMPS"]),
  },
  "trace-rate": { value: "100", check: (p) => assert.equal(p.trace?.rate, 100) },
  "trace-count": { value: "-1", check: (p) => assert.equal(p.trace?.count, -1) },
  "log-frequency": { value: "5", check: (p) => assert.equal(p.trace?.logFrequency, 5) },
  "collect-metrics": { check: (p) => assert.equal(p.collectMetrics, true) },
  "metrics-url": {
    value: "h:8002/metrics",
    check: (p) => assert.equal(p.metricsUrl, "h:8002/metrics"),
  },
  "metrics-interval": { value: "500", check: (p) => assert.equal(p.metricsIntervalMs, 500) },
  // perf_analyzer bounds the variation below only.
  "sequence-length-variation": {
    value: "150",
    check: (p) => assert.equal(p.sequences.variationPct, 150),
  },
  "bls-composing-models": {
    value: "a:1, b",
    check: (p) =>
      assert.deepEqual(p.composingModels, [{ name: "a", version: "1" }, {
        name: "b",
        version: "",
      }]),
  },
  "serial-sequences": { check: (p) => assert.equal(p.sequences.serial, true) },
  "input-tensor-format": {
    value: "JSON",
    check: (p) => assert.equal(p.inputTensorFormat, "json"),
  },
  "output-tensor-format": {
    value: "json",
    check: (p) => assert.equal(p.outputTensorFormat, "json"),
  },
  "version": { check: () => {} },
  "profile-export-file": {
    value: `${NOWHERE}/e.json`,
    check: (p) => assert.equal(p.profileExportFile, `${NOWHERE}/e.json`),
  },
  "periodic-concurrency-range": {
    with: PERIODIC,
    value: "1:4:1",
    check: (p) => assert.deepEqual(p.periodic?.range, { start: 1, end: 4, step: 1 }),
  },
  "request-period": {
    with: [...PERIODIC, "--periodic-concurrency-range", "1:4"],
    value: "5",
    check: (p) => assert.equal(p.periodic?.requestPeriod, 5),
  },
  "request-parameter": {
    with: GRPC,
    value: "max_tokens:16:INT",
    check: (p) => assert.deepEqual(p.requestParameters, [{ name: "max_tokens", value: 16 }]),
  },
  "endpoint": {
    with: ["--service-kind", "openai"],
    value: "v1/chat/completions",
    check: (p) => assert.equal(p.endpoint, "v1/chat/completions"),
  },
  "request-count": { value: "100", check: (p) => assert.equal(p.requestCount, 100) },
  "warmup-request-count": {
    value: "10",
    check: (p) => assert.equal(p.warmupRequestCount, 10),
  },
  "fixed-schedule": {
    with: ["--input-data", "trace.json"],
    check: (p) => assert.ok(p.fixedSchedule && p.loadMode === "custom_intervals"),
  },
  "session-concurrency": {
    with: [
      "--service-kind",
      "openai",
      "--endpoint",
      "v1/chat/completions",
      "--input-data",
      "s.json",
    ],
    value: "4",
    check: (p) => assert.equal(p.sessionConcurrency, 4),
  },
  "grpc-method": {
    value: "pkg.Service/Method",
    refused:
      /^perf_analyzer's --service-kind dynamic_grpc and --grpc-method are not supported: .* use/,
  },
};

function accepted(name: string): Accepted {
  return LONG[name] as Accepted;
}

/** perf_analyzer's letters (its getopt string); those that are also long options say so. */
const SHORT: Record<string, Accepted & { long?: string }> = {
  v: { check: (p) => assert.equal(p.verbose, 1) },
  d: {
    check: (p) => {
      assert.equal(p.loadMode, "concurrency");
      assert.deepEqual(p.concurrency, { start: 1, end: 1, step: 1 });
    },
  },
  a: { long: "async", check: (p) => assert.equal(p.async, true) },
  z: { check: (p) => assert.equal(p.inputData.mode, "zero") },
  c: { value: "8", check: (p) => assert.deepEqual(p.concurrency, { start: 1, end: 8, step: 1 }) },
  u: { value: "h:9", check: (p) => assert.equal(p.url, "h:9") },
  m: { value: "other", check: (p) => assert.equal(p.model, "other") },
  x: { value: "2", check: (p) => assert.equal(p.modelVersion, "2") },
  b: { value: "4", check: (p) => assert.equal(p.batchSize, 4) },
  // -t N alone leaves perf_analyzer's end at 1: N is measured alone.
  t: { value: "4", check: (p) => assert.deepEqual(p.concurrency, { start: 4, end: 1, step: 1 }) },
  p: { long: "measurement-interval", value: "500", check: accepted("measurement-interval").check },
  i: { value: "gRPC", check: (p) => assert.equal(p.protocol, "grpc") },
  H: { value: "X-A:b", check: (p) => assert.deepEqual(p.headers, { "X-A": "b" }) },
  l: { long: "latency-threshold", value: "50", check: accepted("latency-threshold").check },
  r: { long: "max-trials", value: "5", check: accepted("max-trials").check },
  s: { long: "stability-percentage", value: "20", check: accepted("stability-percentage").check },
  f: { value: "out.csv", check: (p) => assert.equal(p.latencyReportFile, "out.csv") },
};

function plan(argv: string[]): ProfilePlan {
  return buildProfileConfig(parseArgv(["-m", "m", ...argv]).options);
}

function usageErrorsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error.errors;
    throw error;
  }
  return [];
}

const usageErrors = (argv: string[]) => usageErrorsOf(() => plan(argv));

/** The shortest abbreviation getopt_long reads as `name` among perf_analyzer's names. */
function abbreviation(name: string): string {
  const names = facts.long_options.map((o) => o.name);
  for (let length = 1; length < name.length; length++) {
    const prefix = name.slice(0, length);
    if (names.filter((n) => n.startsWith(prefix)).length === 1) return prefix;
  }
  return name;
}

/** Short letters of the getopt string with whether each takes a value. */
function shortOptions(optstring: string): Array<{ letter: string; takesValue: boolean }> {
  return [...optstring.matchAll(/([A-Za-z])(:?)/g)].map(([, letter, colon]) => ({
    letter,
    takesValue: colon === ":",
  }));
}

function checkSpellings(spellings: string[][], c: Accepted): void {
  const base = () => plan(c.with ?? []);
  for (const spelling of spellings) {
    const argv = [...(c.with ?? []), ...spelling];
    const errors = usageErrors(argv);
    assert.deepEqual(errors, [], `${argv.join(" ")} is accepted`);
    c.check(plan(argv), base);
  }
}

Deno.test("the option facts are perf_analyzer's at the recorded commit", () => {
  assert.match(facts.commit, /^263c5f6e/);
  assert.equal(facts.long_options.length, 67);
  assert.equal(facts.short_options, "vdazc:u:m:x:b:t:p:i:H:l:r:s:f:");
});

Deno.test("every perf_analyzer option has a case and is in the table as perf_analyzer's", () => {
  const missing = facts.long_options.filter((o) => !(o.name in LONG)).map((o) => `--${o.name}`);
  const missingShort = shortOptions(facts.short_options).filter((s) => !(s.letter in SHORT));
  assert.deepEqual(
    [...missing, ...missingShort.map((s) => `-${s.letter}`)],
    [],
    "perf_analyzer options without a case: accept them in lib/cli/flags/ (or refuse them " +
      "with one line) and add a case",
  );
  for (const { name, has_arg } of facts.long_options) {
    const c = LONG[name];
    if ("pending" in c) continue;
    const def = OPTIONS.find((o) => o.name === name);
    assert.ok(def?.perfAnalyzer, `--${name} is in the option table, marked perfAnalyzer`);
    const flag = def.type === "boolean" || def.type === "count";
    assert.equal(flag, has_arg === "no_argument", `--${name} takes a value as in perf_analyzer`);
  }
  const names = new Set(facts.long_options.map((o) => o.name));
  const stale = OPTIONS.filter((o) => o.perfAnalyzer && !names.has(o.name)).map((o) => o.name);
  assert.deepEqual(stale, [], "options marked perfAnalyzer that perf_analyzer does not have");
  for (const { letter, takesValue } of shortOptions(facts.short_options)) {
    const def = OPTIONS.find((o) => o.short === letter);
    assert.ok(def, `-${letter} is in the option table`);
    const flag = def.type === "boolean" || def.type === "count";
    assert.equal(flag, !takesValue, `-${letter} takes a value as in perf_analyzer`);
    const long = SHORT[letter].long;
    if (long) assert.equal(def.name, long, `-${letter} is --${long}, as in perf_analyzer`);
  }
});

for (const { name, has_arg } of facts.long_options) {
  const c: Case | undefined = LONG[name];
  Deno.test({
    name: `--${name}`,
    ignore: c !== undefined && "pending" in c,
    fn() {
      if (c === undefined) assert.fail(`perf_analyzer's --${name} has no case here`);
      if ("refused" in c) {
        const errors = usageErrors([...(c.with ?? []), `--${name}`, ...(c.value ? [c.value] : [])]);
        assert.equal(errors.length, 1, errors.join("\n"));
        assert.match(errors[0], c.refused);
        return;
      }
      const accepted = c as Accepted;
      if (name === "version") {
        assert.equal(parseArgv([`--${name}`]).action, "version");
        assert.equal(parseArgv([`--${abbreviation(name)}`]).action, "version");
        return;
      }
      const short = abbreviation(name);
      if (has_arg === "required_argument") {
        const value = accepted.value!;
        checkSpellings(
          [[`--${name}`, value], [`--${name}=${value}`], [`--${short}`, value], [
            `--${short}=${value}`,
          ]],
          accepted,
        );
        return;
      }
      // Flags: as perf_analyzer, a word after one is not its value and is ignored
      // (with a warning); --flag=VALUE is inferperf's own, for turning one off.
      checkSpellings(
        [[`--${name}`], [`--${short}`], [`--${name}`, "true"], [`--${name}=1`], [
          `--${name}=TRUE`,
        ]],
        accepted,
      );
      // perf_analyzer's usage shows `--ssl-grpc-use-ssl <bool>`: a "true" after a flag is quiet.
      assert.equal(parseArgv(["-m", "m", `--${name}`, "TRUE", "1"]).warnings.length, 1);
      const parsed = parseArgv(["-m", "m", `--${name}`, "false"]);
      assert.deepEqual(parsed.warnings, [
        `Ignored argument "false": --${name} takes no value and is on, as in perf_analyzer; ` +
        `--${name}=false turns it off`,
      ]);
      for (const off of ["false", "0"]) {
        assert.deepEqual(
          plan([...(accepted.with ?? []), `--${name}=${off}`]),
          plan(accepted.with ?? []),
        );
      }
    },
  });
}

for (const { letter, takesValue } of shortOptions(facts.short_options)) {
  const c: (Accepted & { long?: string }) | undefined = SHORT[letter];
  Deno.test(`-${letter}`, () => {
    if (c === undefined) assert.fail(`perf_analyzer's -${letter} has no case here`);
    if (takesValue) {
      // Also after a flag in one group, as getopt reads "-ap500".
      checkSpellings([[`-${letter}`, c.value!], [`-${letter}${c.value}`], [
        `-a${letter}${c.value}`,
      ]], c);
    } else checkSpellings([[`-${letter}`], [`-a${letter}`]], c);
  });
}

Deno.test("arguments that are not options are ignored with a warning, as perf_analyzer's getopt does", () => {
  // genai-perf's --fixed-schedule command line ends with a stray "None".
  const genaiPerf = [
    "-m",
    "llama",
    "--async",
    "--input-data",
    "inputs.json",
    "--service-kind",
    "openai",
    "--endpoint",
    "v1/chat/completions",
    "--fixed-schedule",
    "None",
  ];
  const parsed = parseArgv(genaiPerf);
  assert.deepEqual(parsed.warnings, [
    'Ignored argument "None": --fixed-schedule takes no value and is on, as in perf_analyzer',
  ]);
  assert.equal(buildProfileConfig(parsed.options).fixedSchedule, true);
  // Anywhere, and after "--", as getopt_long moves them aside and reads on.
  const anywhere = parseArgv(["extra", "-m", "m", "-b", "2", "more", "--", "-v"]);
  assert.deepEqual(anywhere.warnings, [
    'Ignored argument "extra": perf_analyzer ignores it too',
    'Ignored argument "more": perf_analyzer ignores it too',
    'Ignored argument "-v": perf_analyzer ignores it too',
  ]);
  assert.equal(buildProfileConfig(anywhere.options).batchSize, 2);
  assert.equal(buildProfileConfig(anywhere.options).verbose, 0);
  assert.deepEqual(parseArgv(["-m", "m", "-a", "false"]).warnings, [
    'Ignored argument "false": -a takes no value and is on, as in perf_analyzer; ' +
    "--async=false turns it off",
  ]);
  // inferperf's own commands keep refusing them; merge takes them as its runs.
  assert.deepEqual(usageErrorsOf(() => parseArgv(["report", "stray"])), [
    'Unexpected argument "stray"',
  ]);
  assert.deepEqual(parseArgv(["merge", "-o", "o.json", "a.json", "b.json"]).operands, [
    "a.json",
    "b.json",
  ]);
});

Deno.test("abbreviations resolve among perf_analyzer's names first, as its getopt_long", () => {
  // "con" is ours --config and --constraints too, but only --concurrency-range is perf_analyzer's.
  assert.deepEqual(plan(["--con", "4"]).concurrency, { start: 4, end: 1, step: 1 });
  assert.deepEqual(plan(["--concurrency", "1:3"]).concurrency, { start: 1, end: 3, step: 1 });
  // An abbreviation of ours alone resolves too; one that fits several is an error naming them.
  assert.equal(plan(["--summary", "s.json"]).summaryJson, "s.json");
  const [ambiguous, ...more] = usageErrorsOf(() => parseArgv(["--request", "1"]));
  assert.deepEqual(more, []);
  assert.match(
    ambiguous,
    /^Option "--request" is ambiguous: it abbreviates --request-rate-range, /,
  );
  assert.match(ambiguous, /, --request-count\b/);
});

Deno.test("perf_analyzer's older concurrency letters: -t N, -c M, -d", () => {
  const levels = (argv: string[]) => plan(argv).concurrency;
  assert.deepEqual(levels(["-t", "2", "-c", "8"]), { start: 2, end: 8, step: 1 });
  assert.deepEqual(levels(["-d", "-c", "0", "-l", "20"]), { start: 1, end: 0, step: 1 });
  assert.deepEqual(usageErrors(["-t", "2", "--concurrency-range", "4"]), [
    "Options -t/--concurrent-requests and --concurrency-range can not be used together: " +
    "-t N -c M is the older spelling of --concurrency-range N:M",
  ]);
  assert.deepEqual(usageErrors(["-t", "2", "--request-rate-range", "4"]), [
    "Options --request-rate-range, -t/--concurrent-requests can not be used together: " +
    "each chooses a load mode",
  ]);
  assert.deepEqual(usageErrors(["-t", "0"]), [
    'Invalid value "0" for -t/--concurrent-requests: expected an integer >= 1',
  ]);
});

Deno.test("values as perf_analyzer reads them", () => {
  // std::stoi stops at the decimal point.
  assert.equal(plan(["-p", "2500.0"]).measurementIntervalMs, 2500);
  assert.equal(plan(["--max-trials", "29.5"]).maxTrials, 29);
  assert.deepEqual(usageErrors(["-p", "5s"]), [
    'Invalid value "5s" for -p/--measurement-interval: expected an integer',
  ]);
  // -1: the average, perf_analyzer's default.
  assert.equal(plan(["--percentile", "-1"]).percentile, undefined);
  assert.equal(plan(["--stability-percentage", "0"]).stabilityPercentage, 0);
  // An end below the start: the start alone (perf_analyzer's do-while); binary search refuses it.
  assert.deepEqual(plan(["--request-rate-range", "50:10"]).requestRate, {
    start: 50,
    end: 10,
    step: 1,
  });
  assert.deepEqual(usageErrors(["--concurrency-range", "8:2", "--binary-search", "-l", "5"]), [
    "Option --binary-search needs the end of --concurrency-range at or above its start",
  ]);
  assert.equal(plan(["-i", "HTTP", "--output-tensor-format", "Binary"]).protocol, "http");
  assert.deepEqual(
    plan(["--bls-composing-models", "a", "--bls-composing-models", "b:2"]).composingModels,
    [{ name: "a", version: "" }, { name: "b", version: "2" }],
  );
  assert.equal(
    plan(["--service-kind", "triton_c_api", "--model-repository", "r"]).tritonServerDirectory,
    "/opt/tritonserver",
  );
  assert.deepEqual(plan(["-z", "--data-directory", "d"]).inputData, {
    mode: "zero",
    perInput: new Map(),
    paths: ["d"],
  });
  assert.deepEqual(usageErrors(["--service-kind", "dynamic_grpc"]), [
    "perf_analyzer's --service-kind dynamic_grpc and --grpc-method are not supported: their " +
    "input data names commands to run (message_generator), and inferperf starts no " +
    "programs; for KServe v2 servers use --service-kind triton -i grpc, for TF Serving " +
    "tfserving",
  ]);
});

Deno.test("values perf_analyzer takes with a warning are taken so, with one", () => {
  const warnings: string[] = [];
  const warned = buildProfileConfig(
    parseArgv([
      "-m",
      "m",
      "--sequence-length",
      "0",
      "--sequence-id-range",
      "0:10",
      "--output-shared-memory-size",
      "0",
    ]).options,
    { warn: (message) => warnings.push(message) },
  );
  assert.equal(warned.sequences.length, 20);
  assert.deepEqual(warned.sequences.idRange, { start: 1, end: 10 });
  assert.equal(warned.outputSharedMemorySize, 0);
  assert.deepEqual(warnings, [
    "--sequence-length 0 is below 1: using 20",
    "--sequence-id-range starts at 0, which is no sequence id: starting at 1",
  ]);
});
