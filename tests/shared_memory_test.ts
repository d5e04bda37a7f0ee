/**
 * --shared-memory system end to end: the reference server reads the inputs
 * from, and writes the outputs to, the very /dev/shm objects the CLI wrote
 * and reads (an echo model and validation data prove it), over HTTP and gRPC,
 * and no object is left behind after a normal exit, an error exit or Ctrl-C.
 *
 * Deno grants /dev/shm only to --allow-all programs (denoland/deno#30979), so
 * the server and the CLI run as child processes with -A here.
 */
import assert from "node:assert/strict";
import { type CliResult, runCli, ServeProcess, withServer } from "./_helpers.ts";

const decoder = new TextDecoder();

/** Runs the CLI with -A; `signalAfterMs` sends SIGINT at those times. */
const runAll = (args: string[], options: { signalAfterMs?: number[] } = {}): Promise<CliResult> =>
  runCli(args, { ...options, permissions: ["-A"], timeoutMs: 30_000 });

/** `inferperf serve` (-A) on free ports, for the duration of `fn`. */
async function withServeProcess(
  fn: (addresses: { http: string; grpc: string }) => Promise<void>,
): Promise<void> {
  const server = new ServeProcess(0, 0);
  await server.start();
  try {
    await fn(server);
  } finally {
    await server.kill("SIGTERM");
  }
}

/** The shared-memory objects of inferperf processes in /dev/shm (listed by `ls`: Deno would need -A). */
async function leftovers(): Promise<string[]> {
  const out = await new Deno.Command("ls", { args: ["-1", "/dev/shm"] }).output();
  return decoder.decode(out.stdout).split("\n").filter((name) => name.startsWith("inferperf_"));
}

const DATA = {
  data: [
    { INPUT0: { content: [1.5, -2, 3, 4], shape: [4] } },
    { INPUT0: { content: [7, 8], shape: [2] } },
  ],
  validation_data: [
    { OUTPUT0: { content: [1.5, -2, 3, 4], shape: [4] } },
    { OUTPUT0: { content: [7, 8], shape: [2] } },
  ],
};

Deno.test("shared memory: an echo model returns through shared memory what the client wrote", async () => {
  const before = await leftovers();
  const dir = await Deno.makeTempDir();
  try {
    const data = `${dir}/echo.json`;
    await Deno.writeTextFile(data, JSON.stringify(DATA));
    const wrong = `${dir}/wrong.json`;
    const mismatch = structuredClone(DATA);
    mismatch.validation_data[1].OUTPUT0.content = [7, 9];
    await Deno.writeTextFile(wrong, JSON.stringify(mismatch));
    await withServeProcess(async ({ http, grpc }) => {
      for (const [protocol, url] of [["http", http], ["grpc", grpc]]) {
        const args = [
          "-m",
          "identity_fp32",
          "-i",
          protocol,
          "-u",
          url,
          "--shared-memory",
          "system",
        ];
        const ok = await runAll([...args, "--input-data", data, "--request-count", "20"]);
        assert.equal(ok.code, 0, `${protocol}: ${ok.stderr}${ok.stdout}`);
        assert.match(ok.stdout, /Request count: 20\n/);
        assert.deepEqual(await leftovers(), before, `${protocol}: normal exit`);

        // Validation reads the outputs back from shared memory: a wrong expectation fails.
        const failed = await runAll([...args, "--input-data", wrong, "--request-count", "10"]);
        assert.equal(failed.code, 3, protocol);
        assert.match(
          failed.stdout,
          /OUTPUT0 at ".*wrong\.json" data\[1\], element 1: expected 9, got 8/,
        );
        assert.deepEqual(await leftovers(), before, `${protocol}: error exit`);
      }

      // Ctrl-C twice stops at once (exit 130): the objects go all the same.
      const during = new Promise<string[]>((resolve) =>
        setTimeout(() => leftovers().then(resolve), 2000)
      );
      const interrupted = await runAll(
        ["-m", "identity_fp32", "-u", http, "--shared-memory", "system", "--input-data", data],
        { signalAfterMs: [2500, 2700] },
      );
      assert.equal(interrupted.code, 130, interrupted.stderr);
      assert.equal((await during).length, before.length + 2, "input and output objects");
      assert.deepEqual(await leftovers(), before, "hard interrupt");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("shared memory without --allow-all says why it can not run", async () => {
  await withServer(async (server) => {
    const r = await runCli(
      ["-m", "simple", "-u", server.addr, "--shared-memory", "system"],
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--shared-memory system needs --allow-all: Deno grants access to/);
  });
});
