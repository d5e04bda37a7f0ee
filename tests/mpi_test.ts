/**
 * --enable-mpi end to end: `mpirun -n 3` on this machine against the
 * reference server, sharded and coordinated, a rank killed mid-run, and the
 * one-line errors. Needs Open MPI's mpirun (Debian: openmpi-bin, installed by
 * .ci/run); without it the MPI tests are skipped with the reason.
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";
import { percentile } from "../lib/measure/stats.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PERMISSIONS = ["--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-ffi"];
const MPIRUN = ["--allow-run-as-root", "--oversubscribe"];

async function findMpirun(): Promise<string | undefined> {
  try {
    const { success } = await new Deno.Command("mpirun", { args: ["--version"], stdout: "null" })
      .output();
    return success ? undefined : "mpirun --version failed";
  } catch {
    return "mpirun is not installed (Debian: apt-get install openmpi-bin)";
  }
}

const missing = await findMpirun();
if (missing) console.log(`MPI tests skipped: ${missing}`);

/** One rank's command line (an MPMD part: -n 1 deno run ... main.ts ARGS). */
function rank(args: string[], count = 1): string[] {
  return ["-n", String(count), Deno.execPath(), "run", ...PERMISSIONS, MAIN, ...args];
}

interface Job {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mpirun` with `parts` (joined by ":"); `onOutput` sees stdout as it
 * grows (to act mid-run). Killed after `timeoutMs`.
 */
async function mpirun(
  parts: string[][],
  options: { timeoutMs?: number; onOutput?: (stdout: string) => void } = {},
): Promise<Job> {
  const args = [...MPIRUN, ...parts.flatMap((p, i) => i === 0 ? p : [":", ...p])];
  const child = new Deno.Command("mpirun", {
    args,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const killer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000);
  try {
    const stderr = new Response(child.stderr).text();
    const decoder = new TextDecoder();
    let stdout = "";
    for await (const chunk of child.stdout) {
      stdout += decoder.decode(chunk, { stream: true });
      options.onOutput?.(stdout);
    }
    const { code } = await child.status;
    return { code, stdout, stderr: await stderr };
  } finally {
    clearTimeout(killer);
  }
}

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;
const readJson = async (path: string): Promise<Doc> => JSON.parse(await Deno.readTextFile(path));

Deno.test({
  name: "--shard: 3 ranks send one load; rank 0 reports it once, counts match the server's",
  ignore: missing !== undefined,
  fn: () =>
    withServer(async (server) => {
      const dir = await Deno.makeTempDir();
      try {
        const job = await mpirun([rank([
          "--enable-mpi",
          "--shard",
          "-m",
          "slow",
          "-u",
          server.addr,
          "--concurrency-range",
          "3",
          // One window of exactly 90 requests (30 per rank): every exported request is in it.
          "--request-count",
          "90",
          "-v",
          "--summary-json",
          `${dir}/summary.json`,
          "--profile-export-file",
          `${dir}/export.json`,
        ], 3)]);
        assert.equal(job.code, 0, job.stderr + job.stdout);
        assert.equal(job.stdout.match(/Request concurrency: 3/g)?.length, 1, "one report");
        assert.match(job.stdout, /MPI clock offsets to rank 0: rank 0 \+0\.000 ms, rank 1 /);
        for (const r of [0, 1, 2]) assert.match(job.stdout, new RegExp(`Rank ${r}: \\d+\\.\\d+`));

        const summary = await readJson(`${dir}/summary.json`);
        const [level] = summary.levels;
        assert.equal(level.value, 3);
        // The server counted every rank's requests over the same windows.
        const served = level.server[0].inference_count;
        assert.ok(
          Math.abs(level.client.request_count - served) <= served * 0.01 + 1,
          `client ${level.client.request_count} vs server ${served}`,
        );

        // The export holds every rank's requests: their latencies give the summary's percentiles.
        const exported = await readJson(`${dir}/export.json`);
        const requests: Doc[] = exported.experiments[0].requests;
        assert.equal(requests.length, 90);
        assert.equal(level.client.request_count, 90);
        const latencies = Float64Array.from(
          requests.map((r) => (r.response_timestamps.at(-1) - r.timestamp) / 1000),
        ).sort();
        for (const p of [50, 90, 95, 99]) {
          const expected = percentile(latencies, p);
          const reported = level.client.percentiles_us[String(p)];
          assert.ok(Math.abs(reported - expected) <= 1, `p${p}: ${reported} vs ${expected}`);
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }),
});

Deno.test({
  name: "coordinated: three models, every rank ends each level in the same window",
  ignore: missing !== undefined,
  fn: () =>
    withServer(async (server) => {
      const dir = await Deno.makeTempDir();
      const models = ["slow", "simple", "batched"];
      try {
        const job = await mpirun(models.map((model) =>
          rank([
            "--enable-mpi",
            "-m",
            model,
            "-u",
            server.addr,
            "--concurrency-range",
            "1:2",
            "-p",
            "300",
            "-s",
            "100",
            "-v",
            "--summary-json",
            `${dir}/${model}.json`,
          ])
        ));
        assert.equal(job.code, 0, job.stderr + job.stdout);
        // perf_analyzer's -v line, from each rank once the ranks agree at each level.
        for (const level of [1, 2]) {
          const line = `All models on all MPI ranks are stable (3 ranks, concurrency ${level})\n`;
          assert.equal(job.stdout.split(line).length - 1, 3, job.stdout);
        }
        const summaries = await Promise.all(models.map((m) => readJson(`${dir}/${m}.json`)));
        for (const [i, s] of summaries.entries()) assert.equal(s.model.name, models[i]);
        for (const index of [0, 1]) {
          const levels = summaries.map((s) => s.levels[index]);
          assert.deepEqual(levels.map((l) => l.value), [index + 1, index + 1, index + 1]);
          const counts = levels.map((l) => l.windows.length);
          assert.ok(counts.every((c) => c === counts[0]), `windows per rank: ${counts}`);
          // Windows end on one grid: the ranks' last window ends within a few ms of each other.
          const ends = summaries.map((s, r) =>
            s.run_start_unix_ms + levels[r].windows.at(-1).end_ms
          );
          assert.ok(Math.max(...ends) - Math.min(...ends) < 50, `window ends ${ends}`);
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }),
});

Deno.test({
  name: "a rank killed mid-run ends the job with a clear error; finished levels are written",
  ignore: missing !== undefined,
  fn: () =>
    withServer(async (server) => {
      const dir = await Deno.makeTempDir();
      const marker = `x-victim:${crypto.randomUUID()}`;
      const args = (extra: string[]) => [
        "--enable-mpi",
        "-m",
        "slow",
        "-u",
        server.addr,
        "--concurrency-range",
        "1:50",
        "-p",
        "200",
        // Stable at once: this test is about the end of the job, not the levels.
        "-s",
        "10000",
        ...extra,
      ];
      let killed = false;
      try {
        const job = await mpirun([
          rank(args(["-f", `${dir}/rank0.csv`])),
          rank(args(["-H", marker])),
        ], {
          onOutput: (stdout) => {
            if (killed || !stdout.includes("Request concurrency: 1")) return;
            killed = true;
            // The victim is the rank whose command line has the unique header (mpirun's has it too).
            const pattern = `^${Deno.execPath()} run .*${marker}`;
            new Deno.Command("pgrep", { args: ["-f", pattern], stdout: "piped" }).output()
              .then(({ stdout }) => {
                for (const pid of new TextDecoder().decode(stdout).trim().split("\n")) {
                  if (pid) Deno.kill(Number(pid), "SIGKILL");
                }
              });
          },
        });
        assert.ok(killed, job.stdout);
        assert.notEqual(job.code, 0);
        assert.match(job.stderr, /MPI rank 0: the MPI job is ending .*finished levels are written/);
        const csv = await Deno.readTextFile(`${dir}/rank0.csv`);
        const levels = csv.trim().split("\n").slice(1).map((line) => Number(line.split(",")[0]));
        assert.equal(levels[0], 1);
        assert.ok(levels.length < 50, `${levels.length} levels`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }),
});

Deno.test("--shard and --mpi-library need --enable-mpi; --shard refuses --workers", async () => {
  const plain = await runCli(["-m", "slow", "--shard", "--mpi-library", "x.so"]);
  assert.equal(plain.code, 1);
  assert.match(plain.stderr, /Option --shard needs --enable-mpi/);
  assert.match(plain.stderr, /Option --mpi-library needs --enable-mpi/);
  const workers = await runCli(["-m", "slow", "--enable-mpi", "--shard", "--workers", "2"]);
  assert.equal(workers.code, 1);
  assert.match(workers.stderr, /--shard can not be used with --workers 2: start more ranks/);
});

Deno.test("--enable-mpi: one-line errors for a missing library, --allow-ffi, or no mpirun", async () => {
  const library = await runCli(
    ["-m", "slow", "--enable-mpi", "--mpi-library", "/nonexistent/libmpi.so"],
    { permissions: PERMISSIONS },
  );
  assert.equal(library.code, 1);
  assert.match(library.stderr, /^error: --mpi-library \/nonexistent\/libmpi.so can not be loaded/);
  const ffi = await runCli(["-m", "slow", "--enable-mpi"]);
  assert.equal(ffi.code, 1);
  assert.match(ffi.stderr, /--allow-ffi/);
  if (missing) return;
  const alone = await runCli(["-m", "slow", "--enable-mpi"], { permissions: PERMISSIONS });
  assert.equal(alone.code, 1, alone.stderr);
  assert.match(
    alone.stderr,
    /^error: --enable-mpi needs the ranks started by an MPI launcher: mpirun -n N/,
  );
});
