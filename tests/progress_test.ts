/**
 * Progress as a user sees it: a sweep of two points on a terminal (a pty
 * from util-linux's `script`) shows a live line on stderr with the point, k
 * of n, the level and its requests; --no-progress shows none; piped, a
 * run's stderr has no progress at all (its levels are short).
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { runCli } from "./_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const hasScript = (() => {
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();
if (!hasScript) console.log("progress_test: the terminal case is skipped: no `script` command");

/** What a terminal shows of `args` run under a pseudo-terminal (stdout and stderr together). */
async function onTerminal(args: string[]): Promise<string> {
  const command = [Deno.execPath(), "run", "-A", MAIN, ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const { code, stdout } = await child.output();
    const text = new TextDecoder().decode(stdout);
    assert.equal(code, 0, text);
    return text;
  } finally {
    clearTimeout(killer);
  }
}

Deno.test({
  name: "a sweep on a terminal shows a live line; --no-progress and pipes show none",
  ignore: !hasScript,
  async fn() {
    const server = await startServerInWorker();
    const dir = await Deno.makeTempDir({ prefix: "inferperf_progress_" });
    try {
      const sweep = (name: string) => [
        ...["--profile-models", "slow", "-u", server.addr, "--concurrency-range", "1:2"],
        ...["-p", "1500", "--checkpoint-directory", `${dir}/${name}`],
      ];
      const shown = await onTerminal(sweep("live"));
      assert.ok(shown.includes("\r\x1b[2Kpoint 1 of 2: slow, batch size 1 | "), shown);
      assert.match(
        shown,
        /point 2 of 2: slow, batch size 1 \| [\d.]+ s \| concurrency 2 for [\d.]+ s \| \d+ requests \| [\d.]+ infer\/s, p99 [\d.]+ ms/,
      );
      const quiet = await onTerminal([...sweep("quiet"), "--no-progress"]);
      assert.doesNotMatch(quiet, /point 1 of 2/);
      assert.match(quiet, /Sweep complete/);
      const piped = await runCli(["-m", "slow", "-u", server.addr, "-p", "1000"]);
      assert.equal(piped.code, 0, piped.stderr);
      assert.equal(piped.stderr, "");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await server.close();
    }
  },
});
