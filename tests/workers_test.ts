/**
 * --workers 2 end to end: the load split between two worker threads must
 * measure the same ground truth as one thread (Little's law on a model of
 * known latency), send exactly the requests asked for, and fail as one
 * thread does. Tolerances are wide: the machine has 2 cores and is shared.
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { parseCsv, runCli, within } from "./_helpers.ts";

const FP32_16 = {
  inputs: [{ name: "INPUT0", datatype: "FP32" as const, dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32" as const, dims: [16] }],
};

const MODELS: ModelConfig[] = [
  // 10 ms on 8 instances: concurrency 4 never queues, so throughput is 4 / 10 ms.
  { name: "ten", kind: "identity", compute_ms: 10, instances: 8, ...FP32_16 },
  {
    name: "acc",
    kind: "accumulate",
    compute_ms: 1,
    instances: 2,
    sequence_batching: {},
    inputs: [{ name: "INPUT", datatype: "INT32", dims: [4] }],
    outputs: [{ name: "OUTPUT", datatype: "INT32", dims: [4] }],
  },
];

function count(report: string, label: string): number {
  const match = new RegExp(`${label}: (\\d+)`).exec(report);
  assert.ok(match, `"${label}" in:\n${report}`);
  return Number(match[1]);
}

Deno.test("--workers 2 end to end", async (t) => {
  const server = await startServerInWorker({ models: MODELS });
  const url = server.addr;
  const dir = await Deno.makeTempDir();
  try {
    await t.step("concurrency 4 on a 10 ms model: ~400 infer/s, 10 ms latency", async () => {
      const csv = `${dir}/closed.csv`;
      const run = await runCli([
        ..."-m ten --concurrency-range 4 -p 1000 -s 20 --workers 2 --verbose-csv -f".split(" "),
        csv,
        ...["-u", url],
      ]);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const [header, row] = parseCsv(await Deno.readTextFile(csv));
      const column = (name: string) => Number(row[header.indexOf(name)]);
      within(column("Inferences/Second"), 400, 0.2, "throughput");
      within(column("Avg latency"), 10_000, 0.3, "latency");
    });

    await t.step("request rate 200 on 2 workers: the rate, exact counts", async () => {
      const run = await runCli([
        ..."-m ten --request-rate-range 200 --request-count 301 --ignore-send-lag".split(" "),
        ...["--warmup-request-count", "7", "--workers", "2", "-u", url],
      ]);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(count(run.stdout, "Request count"), 301);
      assert.match(run.stdout, /\(301 sends\)/);
      // The server saw each request of the window once: none lost or doubled between workers.
      assert.equal(count(run.stdout, "Inference count"), 301);
      const rate = Number(/Send rate: ([\d.]+) req\/sec/.exec(run.stdout)![1]);
      within(rate, 200, 0.1, "send rate");
    });

    await t.step("a closed loop stops at exactly --request-count", async () => {
      const run = await runCli([
        ..."-m ten --concurrency-range 3 --request-count 101 --workers 2 -u".split(" "),
        url,
      ]);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(count(run.stdout, "Request count"), 101);
      assert.equal(count(run.stdout, "Inference count"), 101);
    });

    await t.step("sequences: each worker plays its own, the server sees no mistake", async () => {
      const run = await runCli([
        ..."-m acc --request-rate-range 300 --num-of-sequences 4 --sequence-length 5".split(" "),
        ..."--request-count 200 --ignore-send-lag --workers 2 -u".split(" "),
        url,
      ]);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(count(run.stdout, "Request count"), 200);
    });

    await t.step("errors: the exit codes and messages of one thread", async () => {
      const missing = await runCli([
        "-m",
        "ten",
        "--input-data",
        `${dir}/none.json`,
        "-u",
        url,
        "--workers",
        "2",
      ]);
      assert.equal(missing.code, 99);
      assert.match(missing.stderr, /none\.json/);
      const ids = await runCli([
        ..."-m acc --concurrency-range 1 --sequence-id-range 5:5 --workers 2 -u".split(" "),
        url,
      ]);
      assert.deepEqual([ids.code, ids.stderr], [
        99,
        "error: --sequence-id-range 5:5 has 1 ids, but 1 sequences run at once on 2 workers\n",
      ]);
      const refused = await runCli([
        ..."-m ten --concurrency-range 2 -p 300 --workers 2 -u 127.0.0.1:1".split(" "),
      ]);
      assert.equal(refused.code, 99);
      assert.match(refused.stderr, /127\.0\.0\.1:1/);
    });

    await t.step("Ctrl-C once: the window finishes, reports are written, exit 0", async () => {
      const run = await runCli(
        [..."-m ten --concurrency-range 2:8:2 -p 500 --workers 2 -u".split(" "), url],
        { signalAt: "Request concurrency: 2" },
      );
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /Concurrency: 2, throughput/);
      assert.doesNotMatch(run.stdout, /Concurrency: 8, throughput/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
});
