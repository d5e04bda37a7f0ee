/**
 * `inferperf merge` end to end: two runs made side by side against the
 * reference server, their summary JSONs and profile exports merged into one
 * each; and the command line's errors.
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;
const readJson = async (path: string): Promise<Doc> => JSON.parse(await Deno.readTextFile(path));

Deno.test("inferperf merge: two runs' summaries and exports, each merged into one", () =>
  withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      const runs = await Promise.all(["a", "b"].map((name) =>
        runCli([
          "-m",
          "slow",
          "-u",
          server.addr,
          "--request-count",
          "20",
          "--summary-json",
          `${dir}/${name}.json`,
          "--profile-export-file",
          `${dir}/${name}.export.json`,
        ])
      ));
      for (const run of runs) assert.equal(run.code, 0, run.stderr);
      const summaries = await runCli([
        "merge",
        "-o",
        `${dir}/merged.json`,
        `${dir}/a.json`,
        `${dir}/b.json`,
      ]);
      assert.equal(summaries.code, 0, summaries.stderr);
      // Two runs at concurrency 1 side by side: a concurrency-1 level, 2 requests in flight in all.
      assert.match(
        summaries.stdout,
        /Merged 2 summaries into .*merged\.json\n {2}concurrency 1 \(in each of 2 runs, 2 in all\): /,
      );
      const merged = await readJson(`${dir}/merged.json`);
      assert.equal(merged.levels[0].client.request_count, 40);
      const exports = await runCli([
        "merge",
        `--output=${dir}/merged.export.json`,
        `${dir}/a.export.json`,
        `${dir}/b.export.json`,
      ]);
      assert.equal(exports.code, 0, exports.stderr);
      const requests = (await readJson(`${dir}/merged.export.json`)).experiments[0].requests;
      assert.equal(requests.length, 40);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }));

Deno.test("inferperf merge: -o and two runs are required; profile options do not apply", async () => {
  const bare = await runCli(["merge", "one.json"]);
  assert.equal(bare.code, 1);
  assert.match(bare.stderr, /Option -o\/--output is required/);
  assert.match(bare.stderr, /Give at least two runs to merge/);
  const model = await runCli(["merge", "-m", "slow", "-o", "x.json", "a.json", "b.json"]);
  assert.equal(model.code, 1);
  assert.match(model.stderr, /Option -m\/--model-name does not apply to "inferperf merge"/);
  const profile = await runCli(["-m", "slow", "-o", "x.json"]);
  assert.equal(profile.code, 1);
  assert.match(profile.stderr, /Option -o\/--output does not apply to "inferperf profile"/);
  const help = await runCli(["merge", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /inferperf merge -o OUT\.json RUN\.json\.\.\./);
});
