/**
 * The search's other ways of walking against the real Triton server: by
 * request rate with the binary search on a latency budget. The identity
 * model sleeping 20 ms per execution serves instances x max batch size x 50
 * requests/s with dynamic batching, 50/s without.
 */
import assert from "node:assert/strict";
import {
  assertSleepCompute,
  assertSleepPoint,
  parseCsv,
  runCli,
  SLEEP_LATEST,
  within,
} from "./_helpers.ts";
import { TRITON_DIR, tritonTest } from "./_triton.ts";
import { bestOf, DELAY_MS, local, MODEL, PERMISSIONS, repository, withCompute } from "./_search.ts";

/** Variants of 1 or 2 instances x max batch 4 (and the model's own). */
const ONE_OR_TWO_BY_4 = [
  "--run-config-search-min-model-batch-size",
  "4",
  "--run-config-search-max-model-batch-size",
  "4",
  "--run-config-search-max-instance-count",
  "2",
];

tritonTest(
  "a request-rate search bisects up to the rate the best configuration serves",
  async () => {
    const root = repository();
    try {
      const run = await runCli([
        ...local(root),
        "--profile-models",
        "delay",
        // The model's own (no dynamic batching, 50/s), then 1 and 2 instances x max batch 4.
        ...ONE_OR_TWO_BY_4,
        "--run-config-search-min-request-rate",
        "64",
        "--run-config-search-max-request-rate",
        "1024",
        "--constraints",
        "max-perf_latency_p99=200",
        ...withCompute(true),
        // A shared 2-core machine sends late now and then; the budget is the test, not the lag.
        "--max-send-lag",
        "100",
      ], { permissions: PERMISSIONS, timeoutMs: 240_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const { best, csv } = bestOf(root, "", /^Model,Batch,Request Rate,/);
      assert.deepEqual(best.slice(3, 7), ["delay_config_1", "2:CPU", "4", "Yes"], csv);
      // Two instances of four per execution, each execution as long as the server measured it
      // (a busy host wakes the sleep late).
      const computeMs = Number(best[9]);
      assertSleepCompute(DELAY_MS, computeMs, csv);
      const capacity = 2 * 4 * 1000 / computeMs;
      // The sweep's powers of two stop at 256 and 512; the bisection goes on between them.
      const rate = Number(best[2]);
      assert.ok(rate > 256 && rate < 512, `best rate ${rate}:\n${csv}`);
      assert.ok(
        Math.abs(Number(best[7]) - capacity) <= capacity * 0.15,
        `${best[7]} infer/sec against a capacity of ${capacity}:\n${run.stdout}`,
      );
      assert.ok(Number(best[8]) <= 200);
      assert.match(run.stdout, /more points of delay_config_1/);
      // Every bisected rate lies between the sweep's last passing and first failing rate.
      const rates = parseCsv(csv).slice(1).filter((r) => r[3] === "delay_config_1").map((r) =>
        Number(r[2])
      );
      assert.ok(rates.filter((r) => r > 256 && r < 512).length <= 5, csv);
      console.log(`best: ${best[2]} req/s, ${best[7]} infer/sec, p99 ${best[8]} ms`);
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "per-model settings: perf_analyzer_flags, triton_server_environment, the CSV fields, the best across models",
  async () => {
    // `var` has a variable dimension: only its perf_analyzer_flags' --shape makes it measurable.
    const root = repository({ var: MODEL.replaceAll("dims: [ 16 ]", "dims: [ -1 ]") });
    try {
      // The server path is a script that records its environment, then runs Triton.
      Deno.writeTextFileSync(
        `${root}/tritonserver`,
        `#!/bin/sh\necho "$INFERPERF_SEARCH_ENV" > ${root}/env.txt\nexec ${TRITON_DIR}/bin/tritonserver "$@"\n`,
      );
      Deno.chmodSync(`${root}/tritonserver`, 0o755);
      const args = local(root);
      args[args.indexOf("--triton-server-path") + 1] = `${root}/tritonserver`;
      Deno.writeTextFileSync(
        `${root}/search.yaml`,
        `profile_models:
  delay:
    parameters: {concurrency: [2]}
    triton_server_environment: {INFERPERF_SEARCH_ENV: from-the-search}
  var:
    parameters: {concurrency: [2]}
    perf_analyzer_flags: {shape: "INPUT0:16", percentile: 95}
    triton_server_environment: {INFERPERF_SEARCH_ENV: from-the-search}
run_config_search_disable: true
inference_output_fields: [model_name, concurrency, perf_throughput, perf_latency_p95, perf_server_queue, perf_server_compute_infer, perf_latency_avg]
server_output_fields: [model_config_path, cpu_used_ram]
num_top_model_configs: 2
`,
      );
      const run = await runCli([...args, "--config", `${root}/search.yaml`], {
        permissions: PERMISSIONS,
        timeoutMs: 120_000,
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(Deno.readTextFileSync(`${root}/env.txt`).trim(), "from-the-search");
      const { csv } = bestOf(
        root,
        "",
        "Model,Concurrency,Throughput (infer/sec),p95 Latency (ms),Server Queue time (ms),Server Compute Infer time (ms),Avg Latency (ms)",
      );
      const rows = parseCsv(csv).slice(1);
      assert.deepEqual(rows.map((r) => r[0]).sort(), ["delay", "var"], csv);
      for (const row of rows) {
        // Two in flight on one instance without dynamic batching: busy all the time at one
        // request per compute time, one waits while one runs.
        const [throughput, queueMs, computeMs, latencyMs] = [2, 4, 5, 6].map((i) => Number(row[i]));
        assertSleepPoint(
          { nominalMs: DELAY_MS, computeMs, throughput, latencyMs, concurrency: 2 },
          { tolerance: 0.1, what: csv },
        );
        within(throughput, 1000 / computeMs, 0.15, `throughput\n${csv}`);
        assert.ok(Math.abs(queueMs - computeMs) < computeMs * 0.5, csv);
      }
      assert.equal(
        Deno.readTextFileSync(`${root}/export/results/metrics-server-only.csv`).split("\n")[0],
        "Model Config Path,RAM Usage (MB)",
      );
      assert.match(run.stdout, /Model Best Configs Across All Models: 2 configurations/);
      assert.ok(
        Deno.statSync(
          `${root}/export/reports/summaries/Best Configs Across All Models/result_summary.html`,
        )
          .isFile,
      );
      // The detailed reports of two configurations from the checkpoint, nothing measured.
      const reportOf = (configs: string) =>
        runCli([
          "report",
          "--checkpoint-directory",
          `${root}/checkpoints`,
          "--export-path",
          `${root}/report`,
          "--report-model-configs",
          configs,
        ], { permissions: PERMISSIONS, timeoutMs: 120_000 });
      const report = await reportOf("delay_config_default,var_config_default");
      assert.equal(report.code, 0, report.stderr + report.stdout);
      for (const name of ["delay_config_default", "var_config_default"]) {
        const page = Deno.readTextFileSync(
          `${root}/report/reports/detailed/${name}/detailed_report.html`,
        );
        assert.match(page, /<h2>Latency breakdown<\/h2>/);
        assert.match(report.stdout, new RegExp(`Detailed report of ${name} written to `));
      }
      const unknown = await reportOf("nope");
      assert.equal(unknown.code, 1, unknown.stderr);
      assert.match(
        unknown.stderr,
        /Unknown configuration nope for --report-model-configs: the checkpoint has delay_config_default, var_config_default/,
      );
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "two models measured together: each model's own load within the constraint, their figures the model's",
  async () => {
    // `delay` sleeps 50 ms, `fast` 10 ms: without batching c in flight wait c x 50 ms and c x 10
    // ms, so under a 90 ms p99 delay takes 1 (20/s), fast all 4 (100/s); the bound sits midway
    // between delay's 1 and 2 in flight (a 75 ms one let one stall of 60 ms, seen once in 7 runs
    // on this 2-core machine, fail delay at 1). With dynamic batching
    // (max batch 4) a closed loop's requests stay staggered, as Triton's batcher takes what is
    // queued when an instance frees: 2 in flight are not batched, 4 are by about 2 (fast ~190/s).
    const step = (ms: number) => MODEL.replace(`"${DELAY_MS}"`, `"${ms}"`);
    const root = repository({ delay: step(50), fast: step(10) });
    try {
      const run = await runCli([
        ...local(root),
        "--profile-models",
        "delay,fast",
        "--run-config-profile-models-concurrently-enable",
        ...ONE_OR_TWO_BY_4.slice(0, 5),
        "1",
        "--run-config-search-max-concurrency",
        "4",
        "--constraints",
        "max-perf_latency_p99=90",
        "--inference-output-fields",
        "model_name,batch_size,concurrency,model_config_path,combination,instance_group,max_batch_size,satisfies_constraints,perf_throughput,perf_latency_p99,perf_latency_avg,perf_server_compute_infer",
      ], { permissions: PERMISSIONS, timeoutMs: 240_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const { csv } = bestOf(
        root,
        "",
        "Model,Batch,Concurrency,Model Config Path,Combination,Instance Group,Max Batch Size,Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms),Avg Latency (ms),Server Compute Infer time (ms)",
      );
      const rows = parseCsv(csv).slice(1);
      // The models' own configurations, and 1 instance x max batch 4 with dynamic batching.
      const combinations = [
        "delay_config_0+fast_config_0",
        "delay_config_default+fast_config_default",
      ];
      assert.deepEqual([...new Set(rows.map((r) => r[4]))].sort(), combinations, csv);
      // Every point is its model's ground truth at its own load, whatever the other's: Little's
      // law between the client's count and latencies; one execution at a time without batching,
      // at most min(c, 4) per execution with it, each taking what the server measured; alone in
      // flight, the trip to the server and back on top (fast served 79/s at concurrency 1 in a
      // full CI run).
      for (const row of rows) {
        const [model, , , config] = row;
        const [concurrency, throughput, latency, compute] = [2, 8, 10, 11].map((i) =>
          Number(row[i])
        );
        const at = `${model} ${config} at ${concurrency}: ${throughput} infer/sec:\n${csv}`;
        assertSleepPoint({
          nominalMs: model === "delay" ? 50 : 10,
          computeMs: compute!,
          throughput: throughput!,
          latencyMs: latency!,
          concurrency: concurrency!,
        }, { tolerance: 0.15, what: at });
        const one = 1000 / compute!;
        const most = config!.endsWith("_config_0") ? Math.min(concurrency!, 4) * one : one;
        assert.ok(throughput! >= one * 0.65 && throughput! <= most * 1.1, at);
      }
      // In each combination each model kept the highest load of its own within the budget.
      for (const combination of combinations) {
        const passing = (model: string) =>
          Math.max(
            ...rows.filter((r) => r[4] === combination && r[0] === model && r[7] === "Yes")
              .map((r) => Number(r[2])),
          );
        assert.deepEqual([passing("delay"), passing("fast")], [1, 4], `${combination}:\n${csv}`);
      }
      // The best batches fast: delay at 1 in flight, fast at 4.
      assert.match(
        run.stdout,
        /Best delay_config_0\+fast_config_0:\n +delay: delay_config_0 \(1:CPU, max batch 4\) at concurrency 1: .*\n +fast: fast_config_0 \(1:CPU, max batch 4\) at concurrency 4: /,
      );
      assert.match(run.stdout, /Best configuration of fast \(fast_config_0\) written to /);
      // The combination's detailed report, from the checkpoint.
      const report = await runCli([
        "report",
        ...["--checkpoint-directory", `${root}/checkpoints`, "--export-path", `${root}/export`],
        ...["--report-model-configs", "delay_config_0+fast_config_0"],
      ], { permissions: PERMISSIONS });
      assert.equal(report.code, 0, report.stderr + report.stdout);
      assert.match(report.stdout, /Detailed report of delay_config_0\+fast_config_0 written to /);
      console.log(
        run.stdout.split("\n").filter((l) => /^(Models| {2}Best| {2}#| {8})/.test(l)).join("\n"),
      );
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "an ensemble of two identity steps: its composing models' configurations searched, the ensemble measured",
  async () => {
    // `slow_step` (20 ms) limits the ensemble: N instances x max batch 4 serve N x 200/s; `fast_step`
    // (5 ms) serves 800/s with one instance, so its count does not matter.
    const step = (delay: number) => MODEL.replace(`"${DELAY_MS}"`, `"${delay}"`);
    const root = repository({
      slow_step: step(20),
      fast_step: step(5),
      pipeline: `platform: "ensemble"
max_batch_size: 4
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    { model_name: "slow_step" model_version: -1
      input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "mid" } },
    { model_name: "fast_step" model_version: -1
      input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUTPUT0" } }
  ]
}
`,
    });
    Deno.removeSync(`${root}/models/pipeline/1`, { recursive: true });
    Deno.mkdirSync(`${root}/models/pipeline/1`);
    try {
      const run = await runCli([
        ...local(root),
        "--profile-models",
        "pipeline",
        ...ONE_OR_TWO_BY_4,
        "--run-config-search-max-concurrency",
        "16",
      ], { permissions: PERMISSIONS, timeoutMs: 300_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const { best, csv } = bestOf(root, "");
      const rows = parseCsv(csv).slice(1);
      // The own configurations, then 2 x 2 combinations of 1, 2 instances x max batch 4.
      assert.equal(new Set(rows.map((r) => r[3])).size, 5, csv);
      // The instance groups are the steps': slow_step's, then fast_step's.
      assert.match(best[4]!, /^2:CPU\+[12]:CPU$/, csv);
      // Two slow instances of four per 20 ms execution, 400/s; the ensemble's own compute is
      // empty, so the late wake-ups of a busy host are bounded by SLEEP_LATEST.
      const served = Number(best[7]);
      assert.ok(served >= 0.85 * 400 / SLEEP_LATEST && served <= 1.15 * 400, csv);
      // One slow instance serves half as much, whatever the fast step's count.
      const bestOfGroup = (group: RegExp) =>
        Math.max(...rows.filter((r) => group.test(r[4]!)).map((r) => Number(r[7])));
      assert.ok(bestOfGroup(/^1:CPU\+/) < 0.65 * Number(best[7]), csv);
      // The fast step's second instance gains nothing: both of the slow step's 2-instance
      // combinations serve within 15 % of each other.
      assert.ok(bestOfGroup(/^2:CPU\+1:CPU$/) >= 0.85 * bestOfGroup(/^2:CPU\+2:CPU$/), csv);
      assert.match(
        run.stdout,
        /Best pipeline_config_\d: slow_step_config_1 \(2:CPU instance\(s\), max batch size 4, dynamic batching\) \+ fast_step_config_[01] /,
      );
      // The best ensemble calls its steps by their own names, each beside it as <step>_best.
      const config = Deno.readTextFileSync(`${root}/output/pipeline_best/config.pbtxt`);
      assert.match(config, /model_name: "slow_step"[^]*model_name: "fast_step"/);
      assert.match(
        Deno.readTextFileSync(`${root}/output/slow_step_best/config.pbtxt`),
        /count: 2/,
      );
      console.log(
        run.stdout.split("\n").filter((l) => /^( {2}Best| {2}#| {8}at)/.test(l)).join("\n"),
      );
      // Model Analyzer's quick search: the own configuration, the climb over both steps' instance
      // counts (each coordinate one point, at 2 x slow_step's max batch x instances), then the best
      // and the own swept over the concurrencies.
      const quick = await runCli([
        ...local(root, "-quick"),
        "--profile-models",
        "pipeline",
        ...ONE_OR_TWO_BY_4,
        "--run-config-search-max-concurrency",
        "16",
        "--run-config-search-mode",
        "quick",
        "--num-configs-per-model",
        "1",
      ], { permissions: PERMISSIONS, timeoutMs: 300_000 });
      assert.equal(quick.code, 0, quick.stderr + quick.stdout);
      const found = bestOf(root, "-quick");
      assert.match(found.best[4]!, /^2:CPU\+[12]:CPU$/, found.csv);
      // Judged as brute's, by ratio (the machine's load moves both): one slow instance serves half.
      const quickRows = parseCsv(found.csv).slice(1);
      const oneSlow = quickRows.filter((r) => /^1:CPU\+/.test(r[4]!)).map((r) => Number(r[7]));
      assert.ok(
        oneSlow.length > 0 && Math.max(...oneSlow) < 0.65 * Number(found.best[7]),
        found.csv,
      );
      assert.match(
        quick.stdout,
        /Quick search of pipeline: the climb measured 4 of the 4 combinations /,
      );
      assert.match(
        quick.stdout,
        /Best pipeline_config_\d: slow_step_config_1 \(2:CPU instance\(s\), max batch size 4, dynamic batching\) \+ fast_step_config_[01] /,
      );
      console.log(`points: brute ${rows.length}, quick ${found.points}`);
      assert.ok(found.points < rows.length, `quick ${found.points}, brute ${rows.length}`);
      console.log(
        quick.stdout.split("\n").filter((l) => /^(Quick| {2}Best| {2}#| {8}at)/.test(l)).join("\n"),
      );
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);
