/**
 * perf_analyzer command lines as scripts write them (older letters, joined
 * and `=` values, mixed-case values, abbreviations, a stray word), run
 * unchanged against the real Triton server (tests/_triton.ts): each exits 0
 * with every request successful. A few requests each.
 */
import assert from "node:assert/strict";
import { runCli } from "./_helpers.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";

const server = "reason" in triton ? undefined : await startTriton();
const HTTP = server?.http ?? "";
const GRPC = server?.grpc ?? "";

/** Runs `args` and requires exit 0, `count` requests measured and none failed; the stderr. */
async function script(args: string[], count: number): Promise<string> {
  const cli = await runCli(args, { timeoutMs: 30_000 });
  assert.equal(cli.code, 0, `inferperf ${args.join(" ")}\n${cli.stderr}${cli.stdout}`);
  assert.match(cli.stdout, new RegExp(`Request count: ${count}\\n`), cli.stdout);
  assert.doesNotMatch(cli.stdout, /Failed requests/);
  return cli.stderr;
}

tritonTest("perf_analyzer's older letters and value spellings", async () => {
  // -t (the concurrency of old scripts), a joined -p and -u, = values.
  await script(["-m", "identity_fp32", `-u${HTTP}`, "-t", "2", "-p500", "--request-count=20"], 20);
  // -d -c: the old dynamic concurrency, here 1 then 2; -i in upper case; -a grouped with -v.
  const swept = await runCli(
    [
      "-m",
      "batched",
      "-i",
      "GRPC",
      "-u",
      GRPC,
      "-d",
      "-c",
      "2",
      "-av",
      "-b",
      "4",
      "-p500",
      "-s",
      "90",
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(swept.code, 0, swept.stderr + swept.stdout);
  assert.match(swept.stdout, /Concurrency: 1, throughput.*\nConcurrency: 2, throughput/);
  // -z and --data-directory's sibling spellings, --shared-memory=none, an abbreviation.
  await script(
    ["-m", "identity_fp32", "-u", HTTP, "-z", "--shared-memory=none", "--concurrency", "1"]
      .concat(["--request-count", "10", "--percentile=-1"]),
    10,
  );
});

tritonTest(
  'genai-perf\'s trailing None is ignored with a warning; a "true" after a flag quietly',
  async () => {
    const stderr = await script(
      ["-m", "decoupled", "-i", "grpc", "-u", GRPC, "--streaming", "true", "--request-count", "10"]
        .concat(["--input-data", "zero", "None"]),
      10,
    );
    assert.equal(stderr, 'warning: Ignored argument "None": perf_analyzer ignores it too\n');
  },
);

tritonTest("a sequence id range from 0 starts at 1, with perf_analyzer's warning", async () => {
  const stderr = await script(
    ["-m", "sequence", "-i", "grpc", "-u", GRPC, "--sequence-id-range", "0:1000"]
      .concat(["--request-count", "12", "--sequence-length", "4"]),
    12,
  );
  assert.match(stderr, /warning: --sequence-id-range starts at 0, .*starting at 1\n/);
});

tritonTest("the shared server stops", async () => {
  const { killed } = await server!.stop();
  assert.equal(killed, false);
});
