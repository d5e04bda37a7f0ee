/**
 * End to end: the profile export, the summary JSON, the HTML report and
 * server metrics of real runs against the reference server, validated
 * against the schemas in docs/ and cross-checked against each other.
 */
import assert from "node:assert/strict";
import { LatencyHistogram } from "../lib/measure/histogram.ts";
import { parseProfileExport, type ProfileExport } from "../lib/report/export.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { parseCsv, runCli, withServer } from "./_helpers.ts";

async function readExport(path: string): Promise<ProfileExport> {
  const exported = parseProfileExport(await Deno.readTextFile(path));
  assert.deepEqual(validate(exported, await loadSchema("profile_export.schema.json")), []);
  return exported;
}

/** Requests whose response arrived within [from, to). */
function completedWithin(
  requests: ProfileExport["experiments"][number]["requests"],
  from: bigint,
  to: bigint,
): number {
  return requests.filter((r) => {
    const last = r.response_timestamps.at(-1);
    return last !== undefined && last >= from && last < to;
  }).length;
}

Deno.test("one run writes a valid profile export, summary, HTML report and GPU metrics", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      const exportFile = `${dir}/profile.json`;
      await Deno.writeTextFile(exportFile, "stale");
      const r = await runCli([
        "-m",
        "simple",
        "-u",
        server.addr,
        "--concurrency-range",
        "1:2",
        "-p",
        "300",
        // Wide: the point is the files, not stability on a busy 2-core machine.
        "-s",
        "90",
        "--profile-export-file",
        exportFile,
        "--overwrite",
        "--summary-json",
        `${dir}/summary.json`,
        "--report-html",
        `${dir}/report.html`,
        "--collect-metrics",
        "--metrics-url",
        `127.0.0.1:${server.metricsPort}/metrics`,
        "--metrics-interval",
        "50",
        "-f",
        `${dir}/perf.csv`,
        "--verbose-csv",
      ]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.doesNotMatch(r.stderr, /warning/);
      assert.match(r.stdout, /Server Prometheus Metrics: \n {4}Avg GPU Utilization:\n {6}GPU-/);

      const summary = JSON.parse(await Deno.readTextFile(`${dir}/summary.json`));
      assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
      assert.deepEqual(summary.levels.map((l: { value: number }) => l.value), [1, 2]);
      assert.equal(Object.keys(summary.levels[0].gpu_metrics).length, 2, "two simulated GPUs");

      const exported = await readExport(exportFile);
      assert.equal(exported.service_kind, "triton");
      assert.equal(exported.experiments.length, 2);
      exported.experiments.forEach((experiment, i) => {
        const level = summary.levels[i];
        assert.deepEqual(experiment.experiment, { mode: "concurrency", value: level.value });
        assert.equal(experiment.window_boundaries.length, level.windows.length + 1);
        assert.equal(experiment.window_latency_histograms!.length, level.windows.length);
        // The reported (last three) windows: their histograms count exactly the level's requests,
        // and the export has a response within their boundaries for each of them.
        const reported = level.windows.length - 3;
        const merged = LatencyHistogram.merge(
          experiment.window_latency_histograms!.slice(reported).map(LatencyHistogram.decode),
        );
        assert.equal(merged.count, level.client.request_count);
        const inWindows = completedWithin(
          experiment.requests,
          experiment.window_boundaries[reported],
          experiment.window_boundaries.at(-1)!,
        );
        assert.ok(
          Math.abs(inWindows - level.client.request_count) <= 2,
          `${inWindows} exported vs ${level.client.request_count} reported`,
        );
        for (const request of experiment.requests) {
          assert.equal(request.response_timestamps.length, 1);
          assert.ok(request.response_timestamps[0] > request.timestamp);
          const { INPUT0, INPUT1 } = request.request_inputs as Record<string, number[]>;
          const { OUTPUT0, OUTPUT1 } = request.response_outputs[0] as Record<string, number[]>;
          assert.equal(INPUT0.length, 16);
          assert.deepEqual(OUTPUT0, INPUT0.map((x, k) => (x + INPUT1[k]) | 0), "add_sub sums");
          assert.deepEqual(OUTPUT1, INPUT0.map((x, k) => (x - INPUT1[k]) | 0));
        }
      });

      const [header, ...rows] = parseCsv(await Deno.readTextFile(`${dir}/perf.csv`));
      const gpuColumns = [
        "Avg GPU Utilization",
        "Avg GPU Power Usage",
        "Max GPU Memory Usage",
        "Total GPU Memory",
      ].map((name) => header.indexOf(name));
      assert.ok(gpuColumns.every((i) => i > 0), header.join(","));
      for (const row of rows) {
        for (const i of gpuColumns) assert.match(row[i], /^(GPU-[0-9a-f-]+:[\d.e+]+;){2}$/);
      }

      const html = await Deno.readTextFile(`${dir}/report.html`);
      assert.match(html, /<div id="chart-throughput-latency"><\/div>/);
      assert.doesNotMatch(html, /(src|href)=["']?https?:/, "no network fetches");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("an interrupted run leaves a valid export (one and two Ctrl-C)", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      // One Ctrl-C ends the run after the current window; two end it at once, here in the middle
      // of a long window, with requests in flight.
      const run = (file: string, options: { windowMs: number; signalAfterMs: number[] }) =>
        runCli([
          "-m",
          "simple",
          "-u",
          server.addr,
          "--concurrency-range",
          "1:16",
          "-p",
          String(options.windowMs),
          "--profile-export-file",
          `${dir}/${file}`,
        ], { signalAfterMs: options.signalAfterMs, timeoutMs: 30_000 });
      const [soft, hard] = await Promise.all([
        run("soft.json", { windowMs: 400, signalAfterMs: [2500] }),
        run("hard.json", { windowMs: 4000, signalAfterMs: [2500, 2800] }),
      ]);
      assert.equal(soft.code, 130, soft.stderr);
      assert.equal(hard.code, 130, hard.stderr);
      const [softExport, hardExport] = [
        await readExport(`${dir}/soft.json`),
        await readExport(`${dir}/hard.json`),
      ];
      assert.ok(softExport.experiments[0].requests.length > 0);
      // Stopped in the middle of the first window: as perf_analyzer's, the export holds the
      // requests of ended windows only, none here.
      assert.equal(hardExport.experiments.length, 1);
      assert.deepEqual(hardExport.experiments[0].requests, []);
      assert.deepEqual(hardExport.experiments[0].window_boundaries, []);
      assert.deepEqual(
        [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
        ["hard.json", "soft.json"],
        "no temporary file is left behind",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("an existing export file is refused; so is an unreachable metrics URL", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const existing = `${dir}/exists.json`;
    await Deno.writeTextFile(existing, "keep");
    const refused = await runCli(["-m", "simple", "--profile-export-file", existing]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /already exists; choose another name or add --overwrite/);
    assert.equal(await Deno.readTextFile(existing), "keep");

    await withServer(async (server) => {
      // Taken after the server's own ports are bound, so that none of them can be this one.
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const closedPort = (listener.addr as Deno.NetAddr).port;
      listener.close();
      const metricsUrl = `127.0.0.1:${closedPort}/metrics`;
      const metricsArgs = ["--collect-metrics", "--metrics-url", metricsUrl];
      const quick = ["--request-count", "200", "--concurrency-range", "1:2"];
      const strict = await runCli([
        ...["-m", "simple", "-u", server.addr, ...metricsArgs, "--require-metrics"],
      ]);
      assert.equal(strict.code, 99, strict.stderr);
      assert.match(
        strict.stderr,
        /^error: --collect-metrics: cannot read server metrics from "127\.0\.0\.1:\d+\/metrics": [^\n]*refused[^\n]*\n$/,
      );
      assert.doesNotMatch(strict.stdout, /Request concurrency/, "no load without the metrics");

      // Without --require-metrics (Model Analyzer always passes --collect-metrics): measured,
      // one warning, and every output says the levels have no metrics.
      const csv = `${dir}/nometrics.csv`;
      const summary = `${dir}/nometrics.json`;
      const html = `${dir}/nometrics.html`;
      const r = await runCli([
        ...["-m", "simple", "-u", server.addr, ...metricsArgs, ...quick],
        ...["-f", csv, "--verbose-csv", "--summary-json", summary, "--report-html", html],
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr.match(/warning: Cannot collect server metrics/g)?.length, 1, r.stderr);
      const none =
        /Server Prometheus Metrics: none \(cannot read server metrics from "127\.0\.0\.1:\d+\/metrics": [^)]*refused/g;
      assert.equal(r.stdout.match(none)?.length, 2, r.stdout);
      const [header, ...rows] = parseCsv(await Deno.readTextFile(csv));
      assert.equal(rows.length, 2);
      for (const name of ["Avg GPU Utilization", "Total GPU Memory"]) {
        // Empty cells: Model Analyzer's reader skips them.
        assert.deepEqual(rows.map((row) => row[header.indexOf(name)]), ["", ""], name);
      }
      const json = JSON.parse(await Deno.readTextFile(summary));
      assert.deepEqual(validate(json, await loadSchema("summary.schema.json")), []);
      for (const level of json.levels) {
        assert.equal(level.gpu_metrics, undefined);
        assert.match(level.gpu_metrics_unavailable, /^cannot read server metrics from/);
      }
      assert.match(
        await Deno.readTextFile(html),
        /No server metrics at concurrency 1, 2: cannot read/,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
