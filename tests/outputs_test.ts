/**
 * Report files: unwritable paths are refused before any load, all at once;
 * a file that cannot be written at the end costs only that file.
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";

Deno.test("unwritable report paths are refused before any request, every one named", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      const started = performance.now();
      const r = await runCli([
        ...["-m", "slow", "-u", server.addr, "-p", "2000"],
        ...["-f", "/nonexistent/dir/x.csv", "--summary-json", dir],
        ...["--report-html", `${dir}/fine.html`],
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(
        r.stderr,
        'error: -f/--latency-report-file "/nonexistent/dir/x.csv": directory ' +
          '"/nonexistent/dir" does not exist\n' +
          `error: --summary-json "${dir}" is a directory; give a file name\n`,
      );
      assert.equal(r.stdout, "", "nothing was measured");
      assert.ok(performance.now() - started < 5000, "no window ran");
      assert.deepEqual([...Deno.readDirSync(dir)], [], "no probe or report left behind");

      const sweep = await runCli([
        ...["profile", "--profile-models", "slow", "-u", server.addr],
        ...["--checkpoint-directory", `${dir}/ckpt`, "-f", "/nonexistent/r.csv"],
      ]);
      assert.equal(sweep.code, 1, sweep.stderr);
      assert.match(sweep.stderr, /^error: -f\/--latency-report-file "\/nonexistent\/r\.csv"/);
      assert.doesNotMatch(sweep.stdout, /\[1\//, "no point was measured");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("a report directory removed during the run costs only its file", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.mkdir(`${dir}/gone`);
      const removed = runCli([
        ...["-m", "slow", "-u", server.addr, "-p", "300", "--concurrency-range", "1:3"],
        ...["-f", `${dir}/gone/perf.csv`, "--summary-json", `${dir}/summary.json`],
      ]);
      await new Promise((resolve) => setTimeout(resolve, 700));
      await Deno.remove(`${dir}/gone`, { recursive: true });
      const late = await removed;
      assert.equal(late.code, 99, late.stderr);
      assert.match(
        late.stderr,
        new RegExp(`^error: Cannot write "${dir}/gone/perf\\.csv": no such file or directory\\n$`),
      );
      assert.match(late.stdout, /Concurrency: 3, throughput/, "every level was reported");
      const summary = JSON.parse(await Deno.readTextFile(`${dir}/summary.json`));
      assert.equal(summary.levels.length, 3, "the other report was written");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
