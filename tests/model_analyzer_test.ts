/**
 * NVIDIA Model Analyzer itself, unchanged (../shared/model-analyzer, built by
 * its install.sh; tests/_python_tool.ts), with this checkout's inferperf as
 * its `perf_analyzer_path`, against the real Triton server: a remote search
 * over gRPC and a local brute search, each beside inferperf's own search of
 * the same space. Model Analyzer's metrics-model-inference.csv must name the
 * same configurations and points as inferperf's, with the same best, and
 * throughput that agrees. Nothing answers at Model Analyzer's metrics URL:
 * inferperf measures on without metrics, as perf_analyzer does.
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

/** A root with the model repository (`delay` alone: Model Analyzer checks every model there). */
function workspace(): string {
  const root = Deno.makeTempDirSync({ prefix: "inferperf_model_analyzer_" });
  Deno.mkdirSync(`${root}/repo/delay/1`, { recursive: true });
  Deno.writeTextFileSync(`${root}/repo/delay/config.pbtxt`, MODEL);
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

/** Runs `model-analyzer profile -f FILE`; its output when it fails. */
async function modelAnalyzer(root: string, yaml: string): Promise<void> {
  const { venv } = found as { venv: string };
  await perfAnalyzerShim(root);
  const file = `${root}/ma.yaml`;
  await Deno.writeTextFile(
    file,
    `${yaml}perf_analyzer_path: ${root}/perf_analyzer\nclient_protocol: grpc\n` +
      `override_output_model_repository: true\ntriton_metrics_url: ${NO_METRICS}\n`,
  );
  const child = new Deno.Command(`${venv}/bin/model-analyzer`, {
    args: ["profile", "-f", file],
    cwd: root,
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
}

/** inferperf's own search with Model Analyzer's windows (count_windows of 50 requests). */
async function inferperfSearch(root: string, yaml: string): Promise<void> {
  const file = `${root}/inferperf.yaml`;
  await Deno.writeTextFile(file, yaml);
  const cli = await runCli(
    [
      ...["profile", "--config", file, "-i", "grpc"],
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

/** metrics-model-inference.csv: throughput by configuration and concurrency, best first. */
function results(dir: string): Array<{ key: string; config: string; throughput: number }> {
  const [header, ...rows] = parseCsv(
    Deno.readTextFileSync(`${dir}/results/metrics-model-inference.csv`),
  );
  const at = (row: string[], name: string) => row[header.indexOf(name)];
  return rows.map((row) => ({
    key: ["Model Config Path", "Instance Group", "Max Batch Size", "Concurrency"]
      .map((name) => at(row, name)).join(" "),
    config: at(row, "Model Config Path"),
    throughput: Number(at(row, "Throughput (infer/sec)")),
  }));
}

/** Both tools' CSVs: the same points, the same best configuration, throughput that agrees. */
function assertAgree(root: string): void {
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
}

function modelAnalyzerTest(name: string, fn: (root: string) => Promise<void>): void {
  Deno.test({
    name: `Model Analyzer: ${name}`,
    ignore: "reason" in found,
    fn: async () => {
      const root = workspace();
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
