/**
 * Sweeps end to end: the CLI in a child process against the reference
 * server, interrupted with Ctrl-C (once, and three times) at different points
 * and resumed until complete. The resumed sweep must end with the same points
 * as an uninterrupted one, with checkpoints numbered as seed 003 says. The
 * sweep and `inferperf report` write the CSV and the HTML report.
 */
import assert from "node:assert/strict";
import { parseCsv, runCli, withServer } from "./_helpers.ts";

/** Two models x concurrency 1 and 2: four points of about 0.7 s (200 ms windows). */
const CONFIG = new URL("../fixtures/sweep/sweep.yaml", import.meta.url).pathname;

interface Checkpoint {
  points: Array<{ point: Record<string, unknown>; result: { client: { throughput: number } } }>;
}

const readCheckpoint = (file: string): Checkpoint => JSON.parse(Deno.readTextFileSync(file));
const keys = (c: Checkpoint) => c.points.map((p) => JSON.stringify(p.point)).sort();
const files = (dir: string) =>
  [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".ckpt")).sort();
/** A sweep's HTML report: a row per point, the best of each model highlighted, both charts. */
function assertHtmlReport(html: string, expected: { points: number }): void {
  assert.match(html, /<title>inferperf sweep report<\/title>/);
  const table = /<tbody>([^]*?)<\/tbody>/.exec(html)?.[1] ?? "";
  assert.equal(table.match(/<tr/g)?.length, expected.points);
  assert.equal(table.match(/<tr class="best">/g)?.length, 2);
  assert.match(html, /id="chart-curve"/);
  assert.match(html, /id="chart-components"/);
}

/** The summary's point table, from its heading to the blank line after it. */
const table = (stdout: string) => /Measured points: \d+[^]*?\n\n/.exec(stdout)?.[0];

Deno.test("sweeps: Ctrl-C once and three times, resume, checkpoints, report", async () => {
  const root = await Deno.makeTempDir();
  try {
    await withServer(async (server) => {
      const sweep = (dir: string, options?: { signalAt?: string; signals?: number }) =>
        runCli(
          ["profile", "--config", CONFIG, "-u", server.addr, "--checkpoint-directory", dir],
          { ...options, timeoutMs: 30_000 },
        );

      const baseline = await sweep(`${root}/baseline`);
      assert.equal(baseline.code, 0, baseline.stderr + baseline.stdout);
      assert.deepEqual(files(`${root}/baseline`), ["0.ckpt"]);
      const expected = keys(readCheckpoint(`${root}/baseline/0.ckpt`));
      assert.equal(expected.length, 4);
      assert.match(
        baseline.stdout,
        /^Best point per model \(highest throughput; constraints: max-p99-latency=50\):\n {2}slow, /m,
      );
      assert.match(baseline.stdout, /Results written to .*results\.csv and .*report\.html/);
      assertHtmlReport(Deno.readTextFileSync(`${root}/baseline/report.html`), { points: 4 });

      const dir = `${root}/resumed`;
      // Once, during the first point: it finishes, is saved, and the sweep stops.
      const once = await sweep(dir, { signalAt: "[1/4]" });
      assert.equal(once.code, 130, once.stderr);
      assert.match(
        once.stdout,
        /Interrupted: measured points are in .*0\.ckpt; run the same command again/,
      );
      assert.doesNotMatch(once.stdout, /\[2\/4\]/);
      assert.deepEqual(files(dir), ["0.ckpt"]);
      assert.equal(readCheckpoint(`${dir}/0.ckpt`).points.length, 1);

      // Three times during the third point: it is lost, the second was saved in 1.ckpt.
      const thrice = await sweep(dir, { signalAt: "[3/4]", signals: 3 });
      assert.equal(thrice.code, 130, thrice.stderr);
      assert.match(thrice.stdout, /^Resuming from checkpoint .*0\.ckpt \(points measured: 1\)/);
      assert.doesNotMatch(thrice.stdout, /\[1\/4\]/, "a measured point is skipped");
      assert.match(thrice.stderr, /Stopped; measured points are in .*1\.ckpt/);
      assert.deepEqual(files(dir), ["0.ckpt", "1.ckpt"]);
      assert.equal(readCheckpoint(`${dir}/0.ckpt`).points.length, 1, "old checkpoints stay");
      assert.equal(readCheckpoint(`${dir}/1.ckpt`).points.length, 2);

      // Once during the last point: the sweep completes anyway.
      const last = await sweep(dir, { signalAt: "[4/4]" });
      assert.equal(last.code, 0, last.stderr);
      assert.match(
        last.stdout,
        /Sweep complete \(points measured now: 2, from the checkpoint: 2\)/,
      );
      assert.deepEqual(files(dir), ["0.ckpt", "1.ckpt", "2.ckpt"]);
      const final = readCheckpoint(`${dir}/2.ckpt`);
      assert.deepEqual(keys(final), expected);
      assert.deepEqual(final.points[0], readCheckpoint(`${dir}/0.ckpt`).points[0]);

      const again = await sweep(dir);
      assert.equal(again.code, 0, again.stderr);
      assert.match(
        again.stdout,
        /Sweep complete \(points measured now: 0, from the checkpoint: 4\)/,
      );
      assert.deepEqual(files(dir), ["0.ckpt", "1.ckpt", "2.ckpt"], "no change, no checkpoint");

      // The report reads the checkpoint: the same table, a CSV row per point.
      const report = await runCli([
        "report",
        "--checkpoint-directory",
        dir,
        "-f",
        `${root}/r.csv`,
        "--report-html",
        `${root}/r.html`,
      ]);
      assert.equal(report.code, 0, report.stderr);
      assertHtmlReport(Deno.readTextFileSync(`${root}/r.html`), { points: 4 });
      assert.match(Deno.readTextFileSync(`${root}/r.html`), /from .*resumed\/2\.ckpt/);
      assert.equal(table(report.stdout), table(again.stdout));
      const [header, ...rows] = parseCsv(Deno.readTextFileSync(`${root}/r.csv`));
      assert.deepEqual(header!.slice(0, 5), [
        "Model",
        "Batch Size",
        "Protocol",
        "Input Data",
        "Concurrency",
      ]);
      assert.equal(rows.length, 4);
      assert.equal(rows.filter((r) => r[header!.indexOf("Best")] === "true").length, 2);

      const changed = await runCli([
        "profile",
        "--config",
        CONFIG,
        "-u",
        server.addr,
        "--checkpoint-directory",
        dir,
        "-p",
        "300",
      ]);
      assert.equal(changed.code, 1);
      assert.match(
        changed.stderr,
        /^error: Checkpoint ".*2\.ckpt" was measured with other settings: -p\/--measurement-interval 200 \(now 300\)\. /,
      );
    });

    Deno.writeTextFileSync(
      `${root}/resumed/3.ckpt`,
      '{"format": "inferperf sweep checkpoint", "vers',
    );
    for (const args of [["profile", "--config", CONFIG], ["report"]]) {
      const corrupt = await runCli([...args, "--checkpoint-directory", `${root}/resumed`]);
      assert.equal(corrupt.code, 1);
      assert.match(
        corrupt.stderr,
        /^error: Checkpoint ".*\/resumed\/3\.ckpt" is corrupt \(.*\); move it away to resume from 2\.ckpt/,
      );
      assert.equal(corrupt.stderr.trim().split("\n").length, 1);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("sweep configuration errors name the YAML key and line; the CLI overrides YAML", async () => {
  const root = await Deno.makeTempDir();
  try {
    const file = `${root}/bad.yaml`;
    await Deno.writeTextFile(
      file,
      "profile-models: [a]\nbatch-size: many\nconcurency-range: 1:4\n",
    );
    const bad = await runCli(["profile", "--config", file]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /Invalid value for "batch-size" at .*bad\.yaml line 2: expected <int>/,
    );
    assert.match(bad.stderr, /Unknown key "concurency-range" at .*bad\.yaml line 3/);

    // The fixture's localhost:8000 is overridden by a port nothing listens on.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = listener.addr.port;
    listener.close();
    const down = await runCli([
      "profile",
      "--config",
      CONFIG,
      "-u",
      `127.0.0.1:${port}`,
      "--checkpoint-directory",
      `${root}/ckpt`,
    ]);
    assert.equal(down.code, 3);
    assert.match(down.stderr, new RegExp(`^error: .*127\\.0\\.0\\.1:${port}`));

    const empty = await runCli(["report", "--checkpoint-directory", `${root}/none`]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /^error: No checkpoint in ".*none": sweeps/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
