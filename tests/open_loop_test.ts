/**
 * Open-loop load end to end: the CLI against the reference server, with
 * faults injected by the server so that the ground truth is known.
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { parseCsv, runCli } from "./_helpers.ts";

const FP32_16 = {
  inputs: [{ name: "INPUT0", datatype: "FP32" as const, dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32" as const, dims: [16] }],
};

/** A 200 ms stall 300 ms after the first request; one model per run (the stall happens once). */
function stalling(name: string): ModelConfig {
  return {
    name,
    kind: "identity",
    compute_ms: 1,
    instances: 4,
    faults: { stall: { start_ms: 300, duration_ms: 200 } },
    ...FP32_16,
  };
}

const MODELS: ModelConfig[] = [
  { name: "fast", kind: "identity", compute_ms: 1, instances: 4, ...FP32_16 },
  stalling("stall_open"),
  stalling("stall_capped"),
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

/** Reads "    <label>: N usec" from a report. */
function usec(report: string, label: string): number {
  const match = new RegExp(`^    ${label}: (\\d+) usec`, "m").exec(report);
  assert.ok(match, `"${label}" in:\n${report}`);
  return Number(match[1]);
}

function sendLagP99(report: string): number {
  const match = /Send lag: p50 \d+ usec, p99 (\d+) usec/.exec(report);
  assert.ok(match, report);
  return Number(match[1]);
}

function blocked(report: string): number {
  return Number(/Sends held back by the in-flight limit: (\d+)/.exec(report)![1]);
}

async function withModels<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const server = await startServerInWorker({ models: MODELS });
  try {
    return await fn(server.addr);
  } finally {
    await server.close();
  }
}

Deno.test("open-loop load end to end", async (t) => {
  await withModels(async (url) => {
    const dir = await Deno.makeTempDir();
    try {
      await t.step("request rate: perf_analyzer's report, then the corrected figures", async () => {
        const csv = `${dir}/rate.csv`;
        const run = await runCli([
          ..."-m fast --request-rate-range 200 --request-count 100 --ignore-send-lag".split(" "),
          ...["-u", url, "-f", csv],
        ]);
        assert.equal(run.code, 0, run.stderr + run.stdout);
        assert.match(run.stdout, /Using uniform distribution on request generation/);
        assert.match(run.stdout, /^Request Rate: 200 inference requests per seconds$/m);
        assert.match(run.stdout, /^Request Rate: 200, throughput: [\d.]+ infer\/sec/m);
        assert.ok(usec(run.stdout, "Corrected p99 latency") >= usec(run.stdout, "p99 latency"));
        assert.match(run.stdout, /Send rate: [\d.]+ req\/sec \(100 sends\)/);
        const [header, row] = parseCsv(await Deno.readTextFile(csv));
        assert.equal(header[0], "Request Rate");
        assert.equal(row[0], "200");
        const column = (name: string) => row[header.indexOf(name)];
        assert.ok(header.indexOf("Errors") < header.indexOf("Corrected p99 latency"));
        assert.equal(column("Blocked Sends"), "0");
        assert.match(column("Trustworthy"), /^(yes|no)$/);
      });

      await t.step("custom intervals loop the file's gaps", async () => {
        const intervals = `${dir}/intervals.txt`;
        await Deno.writeTextFile(intervals, "1000\n3000\n");
        const csv = `${dir}/intervals.csv`;
        const run = await runCli([
          ..."-m fast --request-count 40 --ignore-send-lag".split(" "),
          ...["--request-intervals", intervals, "-u", url, "-f", csv],
        ]);
        assert.equal(run.code, 0, run.stderr + run.stdout);
        assert.doesNotMatch(
          run.stdout,
          /^Request Rate: .* inference requests per seconds$/m,
          "perf_analyzer prints no level heading in this mode",
        );
        assert.match(run.stdout, /\(40 sends\)/);
        assert.equal(parseCsv(await Deno.readTextFile(csv))[1][0], "500");
      });

      await t.step(
        "a server stall: the client keeps sending and both latencies see it",
        async () => {
          const run = await runCli([
            ..."-m stall_open --request-rate-range 200 --request-count 200".split(" "),
            ...["--ignore-send-lag", "-u", url],
          ]);
          assert.equal(run.code, 0, run.stderr + run.stdout);
          assert.ok(usec(run.stdout, "Corrected p99 latency") >= 150_000, run.stdout);
          assert.ok(usec(run.stdout, "p99 latency") >= 150_000, run.stdout);
          assert.equal(blocked(run.stdout), 0);
          // Far below the stall; the bound is loose because test machines are shared.
          assert.ok(sendLagP99(run.stdout) < 100_000, run.stdout);
        },
      );

      await t.step(
        "a stall behind an in-flight cap: only the corrected latency shows it",
        async () => {
          const run = await runCli([
            ..."-m stall_capped --request-rate-range 200 --request-count 200".split(" "),
            ...["--max-inflight", "1", "-u", url],
          ]);
          // Coordinated omission: the sends waited behind the stalled request.
          assert.equal(run.code, 4, run.stderr + run.stdout);
          assert.ok(usec(run.stdout, "Corrected p99 latency") >= 150_000, run.stdout);
          assert.ok(usec(run.stdout, "p99 latency") < 50_000, run.stdout);
          assert.ok(blocked(run.stdout) >= 30, run.stdout);
          assert.ok(sendLagP99(run.stdout) >= 100_000, run.stdout);
          assert.match(run.stdout, /\[UNTRUSTWORTHY\] The p99 send lag/);
          assert.match(
            run.stdout,
            /\[UNTRUSTWORTHY\] Send lag over --max-send-lag at request rate 200/,
          );
          assert.match(run.stderr, /error: 1 load level is untrustworthy/);
        },
      );

      await t.step("sequences pass the server's protocol checks in both modes", async () => {
        // Each run leaves its last sequences live on the server: the next one takes other ids.
        const common = ["-m", "acc", "-u", url, "--sequence-length", "4", "--ignore-send-lag"];
        const closed = await runCli([
          ...common,
          ...["--concurrency-range", "3", "--request-count", "40", "--sequence-id-range", "1:99"],
        ]);
        assert.equal(closed.code, 0, closed.stderr + closed.stdout);
        assert.doesNotMatch(closed.stdout, /Failed requests/);
        for (const [ids, serial] of [["100:199", []], ["200:299", ["--serial-sequences"]]]) {
          const open = await runCli([
            ...common,
            ...["--request-rate-range", "300", "--request-count", "60", "--num-of-sequences", "3"],
            ...["--sequence-id-range", ids as string, ...serial],
          ]);
          assert.equal(open.code, 0, open.stderr + open.stdout);
          assert.doesNotMatch(open.stdout, /Failed requests/);
        }
      });

      await t.step("a client that reuses a live sequence id is caught", async () => {
        const run = await runCli([
          ..."-m acc --concurrency-range 2 --request-count 10".split(" "),
          ...["--sequence-id-range", "5:5", "-u", url],
        ]);
        assert.equal(run.code, 99);
        assert.match(run.stderr, /--sequence-id-range 5:5 has 1 ids, but 2 sequences run at once/);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
