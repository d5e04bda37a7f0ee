/**
 * The BLS search (bls_composing_models) end to end against the reference
 * server's Triton model repository (this Triton build has no Python backend
 * to run a BLS model): `bls` calls `slow` (30 ms) then `fast` (3 ms), holding
 * one of its instances until they answer. With at most 3 instances each, the
 * best is 3 BLS instances and 3 of `slow`: min(3 / 33 ms, 3 / 30 ms) = 91/s;
 * one fewer of either caps it at 2 / 33 ms or 2 / 30 ms (61 or 67/s).
 */
import assert from "node:assert/strict";
import { parseCsv, runCli } from "./_helpers.ts";
import { MEASURE, PERMISSIONS } from "./_search.ts";
import { startServer } from "../lib/server/mod.ts";

const TENSOR = 'input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]\n' +
  'output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]\n';
const delay = (ms: number) =>
  `parameters [ { key: "execute_delay_ms", value: { string_value: "${ms}" } } ]\n`;

function repository(root: string): string {
  const models: Record<string, string> = {
    slow: `backend: "identity"\nmax_batch_size: 0\n${TENSOR}${delay(30)}`,
    fast: `backend: "identity"\nmax_batch_size: 0\n${TENSOR}${delay(3)}`,
    bls: `backend: "python"\nmax_batch_size: 0\n${TENSOR}` +
      'parameters [ { key: "bls_models", value: { string_value: "slow,fast" } } ]\n',
  };
  for (const [name, config] of Object.entries(models)) {
    Deno.mkdirSync(`${root}/models/${name}/1`, { recursive: true });
    Deno.writeTextFileSync(`${root}/models/${name}/config.pbtxt`, config);
  }
  return `${root}/models`;
}

function search(root: string, http: string, more: string[]): string[] {
  return [
    "profile",
    "--model-repository",
    `${root}/models`,
    "--profile-models",
    "bls",
    "--bls-composing-models",
    "slow,fast",
    "--triton-launch-mode",
    "remote",
    "--triton-http-endpoint",
    http,
    "--run-config-search-max-instance-count",
    "3",
    "--run-config-search-max-concurrency",
    "8",
    "--output-model-repository-path",
    `${root}/output`,
    "--export-path",
    root,
    "--checkpoint-directory",
    `${root}/checkpoints`,
    ...MEASURE,
    ...more,
  ];
}

/** Runs `fn` with the reference server serving the test's repository under a fresh `root`. */
async function withServer(fn: (root: string, addr: string) => Promise<void>): Promise<void> {
  const root = Deno.makeTempDirSync({ prefix: "inferperf_bls_" });
  const server = await startServer({
    modelRepository: repository(root),
    modelControlMode: "explicit",
  });
  try {
    await fn(root, server.addr);
  } finally {
    await server.close();
    Deno.removeSync(root, { recursive: true });
  }
}

Deno.test("BLS search: quick climbs the BLS model's and its composing models' instances to the best", async () => {
  await withServer(async (root, addr) => {
    const brute = await runCli(search(root, addr, ["--run-config-search-mode", "brute"]), {
      permissions: PERMISSIONS,
    });
    assert.equal(brute.code, 1, brute.stderr + brute.stdout);
    assert.match(
      brute.stderr,
      /Profiling of models in brute search mode is not supported for BLS models\. Please use quick search mode\./,
    );
    // No mode given: quick, as Model Analyzer searches composing models.
    const run = await runCli(search(root, addr, []), {
      permissions: PERMISSIONS,
      timeoutMs: 120_000,
    });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      /Best bls_config_\d+: 3:CPU .*Which is comprised of the following composing models: slow_config_\d+ \(3:CPU/,
    );
    assert.match(run.stdout, /the climb measured \d+ of the 27 combinations of its own and its/);
    const rows = parseCsv(Deno.readTextFileSync(`${root}/results/metrics-model-inference.csv`))
      .slice(1);
    // The rows show the BLS model's own settings; its best has 3 instances.
    assert.equal(rows[0]![4], "3:CPU", rows.join("\n"));
    // The space has 3 x 3 x 3 combinations: the climb measures fewer.
    const configs = new Set(rows.map((r) => r[3]));
    assert.ok(configs.size < 27, `${configs.size} configurations measured`);
  });
});

Deno.test("BLS search: Optuna samples the same coordinates to the best", async () => {
  await withServer(async (root, addr) => {
    const run = await runCli(
      search(root, addr, [
        ...["--run-config-search-mode", "optuna"],
        ...["--optuna-min-trials", "12", "--optuna-max-trials", "30"],
      ]),
      { permissions: PERMISSIONS, timeoutMs: 120_000 },
    );
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      /Best bls_config_\d+: 3:CPU .*Which is comprised of the following composing models: slow_config_\d+ \(3:CPU/,
    );
    console.log(
      run.stdout.split("\n").filter((l) => /Optuna|Best|at concurrency/.test(l)).join("\n"),
    );
  });
});
