/**
 * Open-loop load end to end: the CLI against the reference server, with
 * faults injected by the server so that the ground truth is known.
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { ACCUMULATE_MODEL, FP32_16, parseCsv, runCli } from "./_helpers.ts";
import { loadSchema, validate } from "./_json_schema.ts";

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
  stalling("stall_failing"),
  ACCUMULATE_MODEL,
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

      await t.step("a fixed schedule sends each step at its timestamp, as one window", async () => {
        // Ten sends 10 ms apart, a pause, ten more 5 ms apart; INPUT0 holds the step number.
        const timestamps = Array.from({ length: 20 }, (_, i) => i < 10 ? i * 10 : 250 + i * 5);
        const steps = timestamps.map((timestamp, i) => ({ INPUT0: Array(16).fill(i), timestamp }));
        const trace = `${dir}/trace.json`;
        await Deno.writeTextFile(trace, JSON.stringify({ data: steps }));
        const exportFile = `${dir}/fixed.json`;
        const run = await runCli([
          ..."-m fast --fixed-schedule --ignore-send-lag".split(" "),
          ...["--input-data", trace, "--profile-export-file", exportFile, "-u", url],
        ]);
        assert.equal(run.code, 0, run.stderr + run.stdout);
        assert.match(run.stdout, /^ {4}Request count: 20$/m);
        assert.match(run.stdout, /^ {4}Send rate: [\d.]+ req\/sec \(20 sends\)$/m);
        const [experiment] = parseProfileExport(await Deno.readTextFile(exportFile)).experiments;
        assert.equal(experiment.window_boundaries.length, 2, "one window");
        const sends = experiment.requests
          .map((r) => ({ due: r.intended_timestamp!, sent: r.timestamp, step: r.request_inputs }))
          .sort((a, b) => Number(a.due - b.due));
        assert.deepEqual(sends.map((s) => (s.step.INPUT0 as number[])[0]), [...timestamps.keys()]);
        sends.forEach((s, i) => {
          const dueMs = Number(s.due - sends[0].due) / 1e6;
          assert.ok(Math.abs(dueMs - timestamps[i]) < 0.001, `step ${i} due at ${dueMs} ms`);
          assert.ok(s.sent >= s.due, `step ${i} left before it was due`);
        });
        const duration = experiment.window_boundaries[1] - experiment.window_boundaries[0];
        assert.ok(duration >= 345_000_000n, `the window covers the schedule: ${duration} ns`);
      });

      await t.step("a fixed schedule needs a timestamp in every step, in send order", async () => {
        const steps = [{ INPUT0: Array(16).fill(0), timestamp: 5 }, { INPUT0: Array(16).fill(1) }];
        const trace = `${dir}/untimed.json`;
        await Deno.writeTextFile(trace, JSON.stringify({ data: steps }));
        const args = ["-m", "fast", "--fixed-schedule", "--input-data", trace, "-u", url];
        const untimed = await runCli(args);
        assert.equal(untimed.code, 1);
        assert.match(
          untimed.stderr,
          /error: "[^"]*untimed\.json" data\[1\]: no "timestamp": --fixed-schedule sends/,
        );
        steps[1] = { ...steps[1], timestamp: 3 };
        await Deno.writeTextFile(trace, JSON.stringify({ data: steps }));
        const backwards = await runCli(args);
        assert.equal(backwards.code, 1);
        assert.match(
          backwards.stderr,
          /data\[1\]: "timestamp" 3 is earlier than 5 of "[^"]*untimed\.json" data\[0\]/,
        );
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
        "a stall behind an in-flight cap: only the corrected latency shows it, every report " +
          "marks the level behind schedule and, as perf_analyzer, the run passes",
        async () => {
          const out = (name: string) => `${dir}/capped.${name}`;
          const run = await runCli([
            ..."-m stall_capped --request-rate-range 200 --request-count 200".split(" "),
            ...["--max-inflight", "1", "-u", url, "-f", out("csv")],
            ...["--summary-json", out("json"), "--report-html", out("html")],
            ...["--profile-export-file", out("export.json")],
          ]);
          // Coordinated omission: the sends waited behind the stalled request.
          assert.equal(run.code, 0, run.stderr + run.stdout);
          assert.ok(usec(run.stdout, "Corrected p99 latency") >= 150_000, run.stdout);
          assert.ok(usec(run.stdout, "p99 latency") < 50_000, run.stdout);
          assert.ok(blocked(run.stdout) >= 30, run.stdout);
          assert.ok(sendLagP99(run.stdout) >= 100_000, run.stdout);
          assert.match(
            run.stdout,
            /\[WARNING\] Perf Analyzer was not able to keep up with the desired request rate\./,
          );
          assert.match(run.stdout, /\[BEHIND SCHEDULE\] The p99 send lag/);
          assert.match(
            run.stdout,
            /\[BEHIND SCHEDULE\] Send lag over --max-send-lag at request rate 200/,
          );
          assert.match(
            run.stderr,
            /^warning: 1 load level is behind schedule: .*--max-send-lag MS/m,
          );
          assert.doesNotMatch(run.stderr, /error:/);
          const [header, row] = parseCsv(await Deno.readTextFile(out("csv")));
          assert.equal(row[header.indexOf("Trustworthy")], "no");
          const summary = JSON.parse(await Deno.readTextFile(out("json")));
          assert.equal(summary.levels[0].open_loop.trustworthy, false);
          assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
          assert.match(
            await Deno.readTextFile(out("html")),
            /Behind schedule at request rate 200: /,
          );
          const exported = parseProfileExport(await Deno.readTextFile(out("export.json")));
          assert.equal(exported.experiments[0].inferperf_behind_schedule, true);
          assert.deepEqual(validate(exported, await loadSchema("profile_export.schema.json")), []);
        },
      );

      await t.step("--max-send-lag given: a level behind schedule fails the run", async () => {
        const run = await runCli([
          ..."-m stall_failing --request-rate-range 200 --request-count 200".split(" "),
          ...["--max-inflight", "1", "--max-send-lag", "1", "-u", url],
        ]);
        assert.equal(run.code, 2, run.stderr + run.stdout);
        assert.match(run.stdout, /\[BEHIND SCHEDULE\] The p99 send lag/);
        assert.match(
          run.stderr,
          /^error: 1 load level is behind schedule: .*--ignore-send-lag to accept/m,
        );
      });

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

      await t.step("validation data checks the responses of sequences", async () => {
        // Two streams, one per sequence: the model answers each step with the running sum.
        const data = (last: number) => ({
          data: [[{ INPUT: [1, 2, 3, 4] }, { INPUT: [1, 1, 1, 1] }], [{ INPUT: [5, 5, 5, 5] }]],
          validation_data: [
            [{ OUTPUT: [1, 2, 3, 4] }, { OUTPUT: [2, 3, 4, 5] }],
            [{ OUTPUT: [5, 5, 5, last] }],
          ],
        });
        const run = async (file: string, ids: string) => {
          await Deno.writeTextFile(
            `${dir}/${file}`,
            JSON.stringify(data(file === "good.json" ? 5 : 6)),
          );
          return await runCli([
            ..."-m acc --concurrency-range 2 --request-count 12".split(" "),
            ...["--input-data", `${dir}/${file}`, "--sequence-id-range", ids, "-u", url],
          ]);
        };
        const good = await run("good.json", "300:399");
        assert.equal(good.code, 0, good.stderr + good.stdout);
        assert.doesNotMatch(good.stdout, /Failed requests/);
        const bad = await run("bad.json", "400:499");
        assert.equal(bad.code, 3, bad.stderr + bad.stdout);
        // Every third request plays the second stream: 4 of 12.
        assert.match(bad.stdout, /Failed requests: 4\n +4 x Output doesn't match expected output/);
      });

      await t.step("a client that reuses a live sequence id is caught", async () => {
        const run = await runCli([
          ..."-m acc --concurrency-range 2 --request-count 10".split(" "),
          ...["--sequence-id-range", "5:5", "-u", url],
        ]);
        assert.equal(run.code, 1);
        assert.match(run.stderr, /--sequence-id-range 5:5 has 1 ids, but 2 sequences run at once/);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
