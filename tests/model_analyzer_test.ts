/**
 * NVIDIA Model Analyzer itself, unchanged (../shared/model-analyzer, built by
 * its install.sh; tests/_python_tool.ts), with this checkout's inferperf as
 * its `perf_analyzer_path`, against the real Triton server: a remote search
 * over gRPC, a local brute search, a remote request-rate search over HTTP
 * with the user's perf_analyzer_flags, and two models profiled concurrently
 * (perf_analyzer under mpiexec with --enable-mpi), each beside inferperf's
 * own search of the same space. Model Analyzer's metrics-model-inference.csv
 * must name the same configurations and points as inferperf's, with the same
 * best, and throughput that agrees (and, where the load fixes it, the
 * throughput the identity models' execute_delay_ms or the request rate
 * gives). Nothing answers at Model Analyzer's metrics URL: inferperf
 * measures on without metrics, as perf_analyzer does.
 */
import assert from "node:assert/strict";
import { parseCsv, runCli } from "./_helpers.ts";
import { exists, findTool, perfAnalyzerShim } from "./_python_tool.ts";
import { startTriton, triton, TRITON_DIR } from "./_triton.ts";
import { freePort } from "../bench/process.ts";

// Installing Model Analyzer takes a minute: only when there is a server to run it against.
const found = "reason" in triton ? triton : await findTool({
  folder: "model-analyzer",
  dirVariable: "MODEL_ANALYZER_DIR",
  venvVariable: "MODEL_ANALYZER_VENV",
});
if ("reason" in found) console.warn(`Skipping the Model Analyzer tests: ${found.reason}.`);

/** 20 ms per execution: N instances x max batch B serve about N x B x 50 requests/s. */
const MODEL = `backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
parameters [ { key: "execute_delay_ms", value: { string_value: "20" } } ]
`;
/** The space both searches cover: the model's own configuration, then 1 and 2 instances x max batch 4. */
const SPACE = `model_repository: REPO
profile_models:
  delay:
    cpu_only: true
    parameters: { concurrency: [2, 8] }
`;
const LOCAL_SPACE = `run_config_search_max_instance_count: 2
run_config_search_min_model_batch_size: 4
run_config_search_max_model_batch_size: 4
`;
/**
 * Model Analyzer's metrics URL, where nothing listens (the port is free): it passes inferperf
 * --collect-metrics --metrics-url, and inferperf measures on without them.
 */
const NO_METRICS = `http://127.0.0.1:${freePort()}/metrics`;
/** On a 2-core machine shared with other suites: the two tools' points measured minutes apart. */
const TOLERANCE = 0.3;

/** A root with the model repository of `models` (Model Analyzer checks every model there). */
function workspace(models: Record<string, string>): string {
  const root = Deno.makeTempDirSync({ prefix: "inferperf_model_analyzer_" });
  for (const [name, config] of Object.entries(models)) {
    Deno.mkdirSync(`${root}/repo/${name}/1`, { recursive: true });
    Deno.writeTextFileSync(`${root}/repo/${name}/config.pbtxt`, config);
  }
  return root;
}

/** The output places of one tool's search under `root/tag`. */
function outputs(root: string, tag: string): string {
  Deno.mkdirSync(`${root}/${tag}`);
  return `export_path: ${root}/${tag}
checkpoint_directory: ${root}/${tag}/checkpoints
output_model_repository_path: ${root}/${tag}/output_models
`;
}

type Protocol = "grpc" | "http";

/**
 * Runs `model-analyzer profile -f FILE` over `protocol` (its client_protocol); its output, with
 * perf_analyzer's (perf_output), which is shown when it fails. `env` is passed on to perf_analyzer (Model Analyzer copies its own).
 */
async function modelAnalyzer(
  root: string,
  yaml: string,
  options: { protocol?: Protocol; env?: Record<string, string> } = {},
): Promise<string> {
  const { venv } = found as { venv: string };
  await perfAnalyzerShim(root);
  const file = `${root}/ma.yaml`;
  await Deno.writeTextFile(
    file,
    `${yaml}perf_analyzer_path: ${root}/perf_analyzer\n` +
      `client_protocol: ${options.protocol ?? "grpc"}\nperf_output: true\n` +
      `override_output_model_repository: true\ntriton_metrics_url: ${NO_METRICS}\n`,
  );
  const child = new Deno.Command(`${venv}/bin/model-analyzer`, {
    args: ["profile", "-f", file],
    cwd: root,
    ...(options.env ? { env: options.env } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
  const { code, stdout, stderr } = await child.output();
  clearTimeout(timer);
  const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assert.equal(code, 0, `model-analyzer exited with ${code}:\n${output.slice(-3000)}`);
  assert.doesNotMatch(output, /attempts to acquire measurements have failed/, output);
  assert.doesNotMatch(output, /Perf Analyzer encountered an error/, output);
  return output;
}

/** inferperf's own search with Model Analyzer's windows (count_windows of 50 requests). */
async function inferperfSearch(
  root: string,
  yaml: string,
  protocol: Protocol = "grpc",
): Promise<void> {
  const file = `${root}/inferperf.yaml`;
  await Deno.writeTextFile(file, yaml);
  const cli = await runCli(
    [
      ...["profile", "--config", file, "-i", protocol],
      ...["--measurement-mode", "count_windows", "--measurement-request-count", "50"],
    ],
    {
      permissions: [
        ...["--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-sys"],
        "--allow-run",
      ],
      timeoutMs: 300_000,
    },
  );
  assert.equal(cli.code, 0, cli.stderr + cli.stdout);
}

interface Row {
  /** Model, configuration, instances, max batch size and load (concurrency or request rate). */
  key: string;
  config: string;
  throughput: number;
}

/**
 * metrics-model-inference.csv: throughput by model, configuration and load, best first. A row of
 * models measured together is one per model: Model Analyzer joins the models' cells with commas
 * ("delay,fast", throughput "143.6, [48.6,95.0]": the total, then each model's), inferperf writes a
 * row per model.
 */
function results(dir: string): Row[] {
  const [header, ...rows] = parseCsv(
    Deno.readTextFileSync(`${dir}/results/metrics-model-inference.csv`),
  );
  const load = header.includes("Request Rate") ? "Request Rate" : "Concurrency";
  const columns = ["Model", "Model Config Path", "Instance Group", "Max Batch Size", load];
  return rows.flatMap((row) => {
    const at = (name: string) => row[header.indexOf(name)];
    const cells = columns.map((name) => at(name).split(","));
    const throughput = at("Throughput (infer/sec)");
    const each = /\[(.*)\]/.exec(throughput)?.[1].split(",") ?? [throughput];
    return each.map((value, i) => ({
      key: cells.map((models) => models[i]).join(" "),
      config: cells[1][i],
      throughput: Number(value),
    }));
  });
}

/** Both tools' CSVs: the same points, the same best configuration, throughput that agrees. */
function assertAgree(root: string): Row[] {
  const ours = results(`${root}/inferperf`);
  const theirs = results(`${root}/ma`);
  const figures = theirs.map((r) =>
    `${r.key}: ${r.throughput} (Model Analyzer) / ${ours.find((o) => o.key === r.key)?.throughput}`
  ).join("\n");
  console.log(figures);
  assert.deepEqual(theirs.map((r) => r.key).sort(), ours.map((r) => r.key).sort(), figures);
  assert.equal(theirs[0].config, ours[0].config, `the best configuration\n${figures}`);
  for (const r of theirs) {
    const mine = ours.find((o) => o.key === r.key)!.throughput;
    assert.ok(Math.abs(r.throughput - mine) <= TOLERANCE * mine, `${r.key}\n${figures}`);
  }
  return theirs;
}

function modelAnalyzerTest(
  name: string,
  fn: (root: string) => Promise<void>,
  models: Record<string, string> = { delay: MODEL },
): void {
  Deno.test({
    name: `Model Analyzer: ${name}`,
    ignore: "reason" in found,
    fn: async () => {
      const root = workspace(models);
      try {
        await fn(root);
      } finally {
        await Deno.remove(root, { recursive: true });
      }
    },
  });
}

modelAnalyzerTest("a remote search over gRPC measures what inferperf's own does", async (root) => {
  const server = await startTriton({
    args: ["--model-control-mode=explicit", "--load-model=delay"],
    repository: `${root}/repo`,
  });
  try {
    const remote = SPACE.replace("REPO", `${root}/repo`) +
      `triton_launch_mode: remote\ntriton_grpc_endpoint: ${server.grpc}\n` +
      `triton_http_endpoint: ${server.http}\nrun_config_search_disable: true\n`;
    await modelAnalyzer(root, remote + outputs(root, "ma"));
    await inferperfSearch(root, remote + outputs(root, "inferperf"));
  } finally {
    await server.stop();
  }
  assertAgree(root);
});

modelAnalyzerTest("a local brute search finds inferperf's points and best", async (root) => {
  const shared = SPACE.replace("REPO", `${root}/repo`) + LOCAL_SPACE +
    `triton_server_flags: { backend-directory: ${TRITON_DIR}/backends }\n`;
  // This Triton build refuses --metrics-port, which Model Analyzer's local mode passes.
  const { dir } = found as { dir: string };
  const nometrics = `${dir}/tritonserver-nometrics`;
  assert.ok(exists(nometrics), nometrics);
  await modelAnalyzer(root, shared + `triton_server_path: ${nometrics}\n` + outputs(root, "ma"));
  await inferperfSearch(
    root,
    shared + `triton_server_path: ${TRITON_DIR}/bin/tritonserver\n` + outputs(root, "inferperf"),
  );
  assertAgree(root);
});

/**
 * 5 ms per execution, one at a time (no dynamic batching): 200 requests/s at most, so that the
 * request rates below are served as sent. Its inputs have two variable dims: a run must be given
 * both shapes (inferperf infers a single variable dim from the data's size, not two).
 */
const SHAPED = `backend: "identity"
max_batch_size: 4
input [
  { name: "INPUT0", data_type: TYPE_FP32, dims: [ -1, -1 ] },
  { name: "INPUT1", data_type: TYPE_FP32, dims: [ -1, -1 ] }
]
output [
  { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ -1, -1 ] },
  { name: "OUTPUT1", data_type: TYPE_FP32, dims: [ -1, -1 ] }
]
instance_group [ { kind: KIND_CPU, count: 1 } ]
parameters [ { key: "execute_delay_ms", value: { string_value: "5" } } ]
`;
/** INPUT0's shape comes from --shape alone, INPUT1's from the data alone. */
const SHAPED_DATA = {
  data: [{
    INPUT0: Array.from({ length: 16 }, (_, i) => i),
    INPUT1: { content: Array.from({ length: 8 }, (_, i) => i), shape: [2, 4] },
  }],
};
const RATES = [50, 100];

modelAnalyzerTest(
  "a remote request-rate search over HTTP with perf_analyzer_flags serves the rates, as inferperf's own",
  async (root) => {
    // gRPC off: a client that used it could not measure anything.
    const server = await startTriton({
      args: ["--model-control-mode=explicit", "--load-model=shaped", "--allow-grpc=false"],
      repository: `${root}/repo`,
    });
    const data = `${root}/input.json`;
    await Deno.writeTextFile(data, JSON.stringify(SHAPED_DATA));
    try {
      const remote = `model_repository: ${root}/repo
triton_launch_mode: remote
triton_http_endpoint: ${server.http}
run_config_search_disable: true
request_rate_search_enable: true
profile_models:
  shaped:
    cpu_only: true
    parameters: { request_rate: [${RATES.join(", ")}] }
perf_analyzer_flags: { shape: "INPUT0:2,8", input-data: ${data}, percentile: 95 }
`;
      await modelAnalyzer(root, remote + outputs(root, "ma"), { protocol: "http" });
      await inferperfSearch(root, remote + outputs(root, "inferperf"), "http");
    } finally {
      await server.stop();
    }
    const rows = assertAgree(root);
    // Under the model's 200 requests/s, what is sent is served: the throughput is the rate.
    for (const rate of RATES) {
      const row = rows.find((r) => r.key.endsWith(` ${rate}`));
      assert.ok(
        row && Math.abs(row.throughput - rate) <= 0.05 * rate,
        `${rate}: ${row?.throughput}`,
      );
    }
  },
  { shaped: SHAPED },
);

/** 10 ms per execution: at any concurrency above one, 100 requests/s (delay: 50). */
const FAST = MODEL.replace('string_value: "20"', 'string_value: "10"');

modelAnalyzerTest(
  "two models profiled concurrently under mpiexec each serve what their delay allows, as inferperf's own",
  async (root) => {
    const server = await startTriton({
      args: ["--model-control-mode=explicit", "--load-model=delay", "--load-model=fast"],
      repository: `${root}/repo`,
    });
    try {
      const remote = `model_repository: ${root}/repo
triton_launch_mode: remote
triton_grpc_endpoint: ${server.grpc}
triton_http_endpoint: ${server.http}
run_config_search_disable: true
run_config_profile_models_concurrently_enable: true
profile_models:
  delay: { cpu_only: true, parameters: { concurrency: [2] } }
  fast: { cpu_only: true, parameters: { concurrency: [2] } }
`;
      // Open MPI gives a host as many slots as cores: a machine of one core would refuse two ranks.
      const env = { OMPI_MCA_rmaps_base_oversubscribe: "1" };
      const output = await modelAnalyzer(root, remote + outputs(root, "ma"), { env });
      // mpiexec --tag-output: each rank's lines as "[job,rank]<stdout>:".
      for (const rank of [0, 1]) {
        assert.match(
          output,
          new RegExp(`^\\[\\d+,${rank}\\]<stdout>:.*MPI: rank ${rank} of 2`, "m"),
        );
      }
      await inferperfSearch(root, remote + outputs(root, "inferperf"));
    } finally {
      await server.stop();
    }
    const rows = assertAgree(root);
    // One instance executes one request at a time: no more than 1000 / delay each, a little less
    // for the server's own time between executions.
    for (const [model, most] of [["delay", 50], ["fast", 100]] as const) {
      const row = rows.find((r) => r.key.startsWith(`${model} `));
      assert.ok(
        row && row.throughput <= 1.02 * most && row.throughput >= 0.85 * most,
        `${model}: ${row?.throughput}`,
      );
    }
  },
  { delay: MODEL, fast: FAST },
);
