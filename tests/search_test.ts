/**
 * Model configuration search end to end against the real Triton server:
 * the identity backend sleeping 10 ms per execution serves about
 * instances x max batch size x 100 requests/s once enough are in flight, so
 * the best configuration of a small brute search is known in advance.
 * Bad input is refused with one line before anything is measured.
 */
import assert from "node:assert/strict";
import { parseModelConfig } from "../lib/protocol/model_config.ts";
import { assertSleepCompute, parseCsv, runCli } from "./_helpers.ts";
import { startTriton, TRITON_DIR, tritonTest } from "./_triton.ts";
import {
  bestOf,
  DELAY_MS,
  INFERENCE_HEADER,
  local,
  MEASURE,
  MODEL,
  PERMISSIONS,
  repository,
  withCompute,
} from "./_search.ts";

const HEADER = `${INFERENCE_HEADER},Server Compute Infer time (ms)`;

tritonTest("brute and quick search pick the configuration the formula says is best", async () => {
  const root = repository();
  try {
    const args = [
      "--profile-models",
      "delay",
      "--run-config-search-max-instance-count",
      "2",
      "--run-config-search-max-model-batch-size",
      "4",
      "--run-config-search-max-concurrency",
      "32",
      "--constraints",
      "max-perf_latency_p99=150",
      ...withCompute(false),
    ];
    const started = performance.now();
    const run = await runCli([...local(root), ...args], {
      permissions: PERMISSIONS,
      timeoutMs: 180_000,
    });
    const bruteSeconds = (performance.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr + run.stdout);
    // Default, then (1, 2 instances) x (max batch 1, 2, 4).
    for (let n = 0; n < 6; n++) assert.ok(Deno.statSync(`${root}/output/delay_config_${n}`));
    const brute = bestOf(root, "", HEADER);
    // 2 instances x max batch 4 per execution, each as long as the server measured it (a busy
    // host wakes the 20 ms sleep late).
    const computeMs = Number(brute.best[9]);
    assertSleepCompute(DELAY_MS, computeMs, brute.csv);
    const formula = 2 * 4 * 1000 / computeMs;
    assert.deepEqual(brute.best.slice(3, 7), ["delay_config_5", "2:CPU", "4", "Yes"], brute.csv);
    assert.ok(
      Math.abs(Number(brute.best[7]) - formula) <= formula * 0.1,
      `${brute.best[7]} vs ${formula}:\n${run.stdout}`,
    );
    assert.ok(Number(brute.best[8]) <= 150);
    assert.match(run.stdout, /Best delay_config_5: 2:CPU instance\(s\), max batch size 4/);
    // Every variant written was loaded and measured.
    assert.doesNotMatch(run.stdout, /Failed:/);
    assert.equal(new Set(parseCsv(brute.csv).slice(1).map((r) => r[3])).size, 7, brute.csv);
    const ram = parseCsv(
      Deno.readTextFileSync(`${root}/export/results/metrics-server-only.csv`),
    ).slice(1);
    assert.equal(ram.length, 7);
    assert.ok(ram.every((r) => Number(r[2]) > 1), "the server's resident memory");
    const bestConfig = parseModelConfig(
      Deno.readTextFileSync(`${root}/output/delay_best/config.pbtxt`),
    );
    assert.equal(bestConfig.name, undefined);
    assert.equal(bestConfig.max_batch_size, 4);
    assert.deepEqual(bestConfig.instance_group, [{ count: 2, kind: "KIND_CPU" }]);
    assert.deepEqual(bestConfig.dynamic_batching, {});
    assert.ok(Deno.statSync(`${root}/output/delay_best/1`).isDirectory);
    const html = Deno.readTextFileSync(
      `${root}/export/reports/summaries/delay/result_summary.html`,
    );
    assert.match(html, /delay_config_5/);
    assert.match(html, /id="chart-curve"/);
    assert.match(html, /<h2>Why delay_config_5 won<\/h2>/);
    assert.match(html, /<pre data-best-config>[^<]*count: 2/);

    const quickStarted = performance.now();
    const quickRun = await runCli(
      [...local(root, "_quick"), ...args, "--run-config-search-mode", "quick"],
      { permissions: PERMISSIONS, timeoutMs: 180_000 },
    );
    const quickSeconds = (performance.now() - quickStarted) / 1000;
    assert.equal(quickRun.code, 0, quickRun.stderr + quickRun.stdout);
    const quick = bestOf(root, "_quick", HEADER);
    assert.deepEqual(quick.best.slice(3, 7), brute.best.slice(3, 7), quick.csv);
    // The final sweep: the best's curve starts at the lowest concurrency too.
    assert.ok(
      parseCsv(quick.csv).some((r) => r[3] === quick.best[3] && r[2] === "1"),
      quick.csv,
    );
    assert.ok(
      quick.points <= 0.4 * brute.points,
      `quick measured ${quick.points} points, brute ${brute.points}:\n${quickRun.stdout}`,
    );
    console.log(
      `brute: ${brute.points} points in ${
        bruteSeconds.toFixed(1)
      } s; quick: ${quick.points} points in ${quickSeconds.toFixed(1)} s`,
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

tritonTest(
  "remote mode: a manual search through the repository API; a refused variant is reported",
  async () => {
    const server = await startTriton({
      args: ["--model-control-mode=explicit", "--load-model=batched"],
    });
    const root = Deno.makeTempDirSync({ prefix: "inferperf_search_" });
    try {
      const models = new URL("../fixtures/triton/models/", import.meta.url).pathname;
      Deno.writeTextFileSync(
        `${root}/search.yaml`,
        `model_repository: ${models}
triton_launch_mode: remote
triton_http_endpoint: ${server.http}
output_model_repository_path: ${root}/output
export_path: ${root}/export
checkpoint_directory: ${root}/checkpoints
objectives: {perf_throughput: 1}
profile_models:
  batched:
    model_config_parameters:
      max_batch_size: [4]
      instance_group: [{kind: [KIND_CPU, KIND_GPU], count: [1, 2]}]
    parameters:
      concurrency: [16]
`,
      );
      const run = await runCli(["profile", "--config", `${root}/search.yaml`, ...MEASURE], {
        permissions: PERMISSIONS,
        timeoutMs: 120_000,
      });
      // The GPU variants can not load on this CPU-only server: reported, the rest measured.
      assert.equal(run.code, 3, run.stderr + run.stdout);
      assert.match(run.stdout, /Failed: batched_config_[23]: Triton refused to load batched: /);
      assert.match(run.stderr, /2 configurations could not be measured/);
      const rows = parseCsv(
        Deno.readTextFileSync(`${root}/export/results/metrics-model-inference.csv`),
      ).slice(1);
      const byConfig = new Map(rows.map((r) => [r[3], Number(r[7])]));
      assert.deepEqual([...byConfig.keys()].sort(), [
        "batched_config_0",
        "batched_config_1",
        "batched_config_default",
      ]);
      // 2 instances x max batch 4 and the model's own 1 x 8 both serve 800/s by the formula.
      assert.ok(
        ["batched_config_1", "batched_config_default"].includes(rows[0]![3]!),
        rows.join("\n"),
      );
      assert.ok(
        byConfig.get("batched_config_1")! > 1.3 * byConfig.get("batched_config_0")!,
        run.stdout,
      );
      // The server's own configuration of the model is back.
      const config = await (await fetch(`http://${server.http}/v2/models/batched/config`)).json();
      assert.equal(config.max_batch_size, 8);
    } finally {
      await server.stop();
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest("bad input is one line, before anything is measured", async () => {
  const root = repository({ broken: 'backend: "identity"\nmax_batch_size: "four"\n' });
  // A port in use, given to the server by hand.
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 }) as Deno.TcpListener;
  try {
    const cases: Array<[string[], number, RegExp]> = [
      [
        ["--profile-models", "nope"],
        1,
        /^error: Model "nope" is not in the model repository .*: no .*nope\/config\.pbtxt$/,
      ],
      [
        ["--profile-models", "broken"],
        1,
        /^error: .*broken\/config\.pbtxt:2:17: Expected an integer for field "max_batch_size", found ""four""$/,
      ],
      [
        ["--profile-models", "delay", "--triton-server-path", "/nonexistent/tritonserver"],
        1,
        /^error: Can not start the Triton server "\/nonexistent\/tritonserver": not found \(set --triton-server-path\)$/,
      ],
      [
        ["--profile-models", "delay", "--triton-server-flags", "http-port=abc"],
        3,
        /^error: The Triton server .* exited with code 1; its output ends: .*Invalid option value\. Got abc/,
      ],
      [
        ["--profile-models", "delay", "--triton-server-flags", `http-port=${busy.addr.port}`],
        3,
        /^error: The Triton server .* exited with code 1; its output ends: .*(address already in use|failed to start)/i,
      ],
      [
        ["--profile-models", "delay", "--triton-launch-mode", "docker"],
        1,
        /^error: --triton-launch-mode docker is not supported/,
      ],
    ];
    for (const [args, code, pattern] of cases) {
      const run = await runCli([...local(root), ...args], { permissions: PERMISSIONS });
      assert.equal(run.code, code, `${args.join(" ")}: ${run.stderr}`);
      assert.throws(
        () => Deno.statSync(`${root}/output`),
        Deno.errors.NotFound,
        "nothing left behind",
      );
      assert.match(run.stderr.split("\n")[0]!, pattern, args.join(" "));
    }
    // An existing output repository is refused without --override-output-model-repository.
    Deno.mkdirSync(`${root}/output`, { recursive: true });
    const again = await runCli([...local(root), "--profile-models", "delay"], {
      permissions: PERMISSIONS,
    });
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      /^error: The output model repository .*output exists: .*--override-output-model-repository/,
    );
  } finally {
    busy.close();
    Deno.removeSync(root, { recursive: true });
  }
});

tritonTest(
  "Ctrl-C once saves the running point and exits 130; the same command resumes",
  async () => {
    const root = repository();
    try {
      const args = [
        ...local(root),
        "--profile-models",
        "delay",
        "--run-config-search-max-instance-count",
        "2",
        "--run-config-search-max-model-batch-size",
        "1",
        "--run-config-search-min-concurrency",
        "4",
        "--run-config-search-max-concurrency",
        "8",
      ];
      const once = await runCli(args, {
        permissions: PERMISSIONS,
        signalAt: "[2/3]",
        timeoutMs: 120_000,
      });
      assert.equal(once.code, 130, once.stderr + once.stdout);
      assert.match(once.stdout, /Interrupted: measured points are in .*0\.ckpt/);
      const saved = JSON.parse(Deno.readTextFileSync(`${root}/checkpoints/0.ckpt`)).points.length;
      assert.ok(saved >= 2, `${saved} points saved`);
      const resumed = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 120_000 });
      assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
      assert.match(
        resumed.stdout,
        new RegExp(`resuming from checkpoint .*0\\.ckpt \\(points measured: ${saved}\\)`),
      );
      assert.match(resumed.stdout, new RegExp(`from the checkpoint: ${saved}\\)`));
      const rows = parseCsv(
        Deno.readTextFileSync(`${root}/export/results/metrics-model-inference.csv`),
      ).slice(1);
      assert.deepEqual(new Set(rows.map((r) => r[3])).size, 3);
      const all = JSON.parse(Deno.readTextFileSync(`${root}/checkpoints/1.ckpt`)).points.length;
      assert.equal(rows.length, all);
      // `inferperf report` rebuilds the same CSV from the checkpoint, measuring nothing.
      const report = await runCli([
        "report",
        "--checkpoint-directory",
        `${root}/checkpoints`,
        "--export-path",
        `${root}/report`,
      ], { permissions: PERMISSIONS });
      assert.equal(report.code, 0, report.stderr + report.stdout);
      assert.equal(
        Deno.readTextFileSync(`${root}/report/results/metrics-model-inference.csv`),
        Deno.readTextFileSync(`${root}/export/results/metrics-model-inference.csv`),
      );
      assert.ok(Deno.statSync(`${root}/report/reports/summaries/delay/result_summary.html`));
      // A changed model refuses the resume in one line naming the field, not the whole file.
      Deno.writeTextFileSync(
        `${root}/models/delay/config.pbtxt`,
        MODEL.replace("max_batch_size: 4", "max_batch_size: 8"),
      );
      const changed = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 60_000 });
      assert.notEqual(changed.code, 0);
      assert.match(changed.stderr, /config\.pbtxt of delay: max_batch_size 4 \(now 8\)/);
      assert.equal(changed.stderr.trim().split("\n").length, 1, changed.stderr);
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "a local server that dies mid-search is started again and the point measured again",
  async () => {
    const root = repository();
    try {
      let killed: number | undefined;
      const run = await runCli([
        ...local(root),
        "--profile-models",
        "delay",
        "--run-config-search-max-instance-count",
        "2",
        "--run-config-search-max-model-batch-size",
        "1",
        "--run-config-search-min-concurrency",
        "4",
        "--run-config-search-max-concurrency",
        "8",
      ], {
        permissions: PERMISSIONS,
        timeoutMs: 120_000,
        onStdout: (stdout) => {
          const pid = /^Server: .* \(PID (\d+)\)/m.exec(stdout)?.[1];
          // Killed while the second configuration is measured: the server this test's CLI started.
          if (pid && killed === undefined && stdout.includes("[2/3]")) {
            killed = Number(pid);
            Deno.kill(killed, "SIGKILL");
          }
        },
      });
      assert.ok(killed !== undefined, run.stdout);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /the server stopped \(.*\); restarted/);
      assert.equal((run.stdout.match(/^Server: /gm) ?? []).length, 2);
      const rows = parseCsv(
        Deno.readTextFileSync(`${root}/export/results/metrics-model-inference.csv`),
      ).slice(1);
      assert.equal(new Set(rows.map((r) => r[3])).size, 3, rows.join("\n"));
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "a local server dies with inferperf, even when inferperf is SIGKILLed",
  async () => {
    const root = repository();
    try {
      const run = await runCli([
        ...local(root),
        "--profile-models",
        "delay",
        "--run-config-search-max-instance-count",
        "1",
        "--run-config-search-max-model-batch-size",
        "1",
      ], { permissions: PERMISSIONS, timeoutMs: 120_000, killAt: "[1/" });
      assert.equal(run.code, 137, run.stderr + run.stdout);
      const pid = Number(/^Server: .* \(PID (\d+)\)/m.exec(run.stdout)?.[1]);
      assert.ok(pid > 0, run.stdout);
      // SIGTERM, then Triton's exit (about 2.5 s), SIGKILL after 10 s at most.
      const deadline = performance.now() + 20_000;
      // kill -0: Deno reads /proc only with --allow-all.
      const alive = async () =>
        (await new Deno.Command("sh", {
          args: ["-c", 'kill -0 "$1" 2>/dev/null', "sh", String(pid)],
        }).output()).success;
      while (await alive() && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(!await alive(), `the server (PID ${pid}) outlived inferperf`);
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "c_api mode: each point's run loads the variant into Triton's library in process",
  async () => {
    const root = repository();
    try {
      const run = await runCli([
        ...local(root),
        "--triton-launch-mode",
        "c_api",
        "--triton-server-directory",
        TRITON_DIR,
        "--profile-models",
        "delay",
        "--run-config-search-max-instance-count",
        "2",
        "--run-config-search-max-model-batch-size",
        "1",
        "--run-config-search-min-concurrency",
        "2",
        "--run-config-search-max-concurrency",
        "2",
      ], { permissions: [...PERMISSIONS, "--allow-ffi"], timeoutMs: 120_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /Server: Triton's library in this process \(c_api\)/);
      const rows = parseCsv(
        Deno.readTextFileSync(`${root}/export/results/metrics-model-inference.csv`),
      ).slice(1);
      const byConfig = new Map(rows.map((r) => [r[3], Number(r[7])]));
      // At concurrency 2, two instances of the 10 ms model serve about twice what one does.
      assert.ok(
        byConfig.get("delay_config_1")! > 1.5 * byConfig.get("delay_config_0")!,
        rows.join("\n"),
      );
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "remote mode: a quick search climbs to the formula's best through the repository API",
  async () => {
    const server = await startTriton({
      args: ["--model-control-mode=explicit", "--load-model=batched"],
    });
    const root = Deno.makeTempDirSync({ prefix: "inferperf_search_" });
    try {
      const run = await runCli([
        "profile",
        "--model-repository",
        new URL("../fixtures/triton/models/", import.meta.url).pathname,
        "--profile-models",
        "batched",
        "--triton-launch-mode",
        "remote",
        "--triton-http-endpoint",
        server.http,
        "--run-config-search-mode",
        "quick",
        "--run-config-search-max-instance-count",
        "2",
        "--run-config-search-max-model-batch-size",
        "2",
        "--run-config-search-min-concurrency",
        "2",
        "--run-config-search-max-concurrency",
        "8",
        "--output-model-repository-path",
        `${root}/output`,
        "--export-path",
        root,
        "--checkpoint-directory",
        `${root}/checkpoints`,
        ...MEASURE,
      ], { permissions: PERMISSIONS, timeoutMs: 120_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const rows = parseCsv(Deno.readTextFileSync(`${root}/results/metrics-model-inference.csv`))
        .slice(1);
      // 2 instances x max batch 2 (400/s by the formula) beats 1 x 2 and 2 x 1 (200/s).
      assert.deepEqual(rows[0]!.slice(4, 6), ["2:CPU", "2"], rows.join("\n"));
      assert.ok(
        !rows.some((r) => r[3] === "batched_config_default"),
        "quick skips the model's own",
      );
    } finally {
      await server.stop();
      Deno.removeSync(root, { recursive: true });
    }
  },
);

tritonTest(
  "remote mode: a brute search picks the formula's best through the repository API",
  async () => {
    const root = repository();
    // A second --model-repository: the server serves the fixtures and this test's `delay`.
    const server = await startTriton({
      args: [
        "--model-control-mode=explicit",
        `--model-repository=${root}/models`,
        "--load-model=delay",
      ],
    });
    try {
      const run = await runCli([
        "profile",
        "--model-repository",
        `${root}/models`,
        "--profile-models",
        "delay",
        "--triton-launch-mode",
        "remote",
        "--triton-http-endpoint",
        server.http,
        "--run-config-search-max-instance-count",
        "2",
        "--run-config-search-max-model-batch-size",
        "4",
        "--run-config-search-max-concurrency",
        "32",
        "--constraints",
        "max-perf_latency_p99=150",
        "--output-model-repository-path",
        `${root}/output`,
        "--export-path",
        `${root}/export`,
        "--checkpoint-directory",
        `${root}/checkpoints`,
        ...MEASURE,
      ], { permissions: PERMISSIONS, timeoutMs: 180_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const { best, csv } = bestOf(root, "");
      // 2 instances x max batch 4 x 1000 / 20 ms.
      const formula = 2 * 4 * 1000 / DELAY_MS;
      assert.deepEqual(best.slice(3, 7), ["delay_config_5", "2:CPU", "4", "Yes"], csv);
      assert.ok(
        Math.abs(Number(best[7]) - formula) <= formula * 0.1,
        `${best[7]} vs ${formula}:\n${run.stdout}`,
      );
      assert.equal(new Set(parseCsv(csv).slice(1).map((r) => r[3])).size, 7, csv);
      // The server's own configuration of the model is back.
      const config = await (await fetch(`http://${server.http}/v2/models/delay/config`)).json();
      assert.deepEqual([config.max_batch_size, config.instance_group[0].count], [4, 1]);
    } finally {
      await server.stop();
      Deno.removeSync(root, { recursive: true });
    }
  },
);
