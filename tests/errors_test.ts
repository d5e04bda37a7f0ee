/**
 * Failures during load: failed requests are counted and reported while the
 * run goes on (exit 3 after the reports); a server that dies mid-run ends
 * the run with exit 3 and keeps the levels already measured.
 */
import assert from "node:assert/strict";
import { type CliOptions, type CliResult, parseCsv, runCli } from "./_helpers.ts";

const METADATA = {
  name: "flaky",
  versions: ["1"],
  platform: "fake",
  inputs: [{ name: "IN", datatype: "INT32", shape: [4] }],
  outputs: [{ name: "OUT", datatype: "INT32", shape: [4] }],
};

/** A minimal KServe v2 server whose infer handler is the test's. */
function fakeServer(infer: (n: number) => Response | Promise<Response>) {
  let n = 0;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/v2") return Response.json({ name: "fake", version: "1", extensions: [] });
      if (path === "/v2/models/flaky") return Response.json(METADATA);
      if (path === "/v2/models/flaky/infer") {
        await req.arrayBuffer();
        return infer(++n);
      }
      return Response.json({ error: `no route ${path}` }, { status: 404 });
    },
  );
  return { addr: `127.0.0.1:${server.addr.port}`, stop: () => (ac.abort(), server.finished) };
}

/** Profiles the fake server's model, asking for JSON outputs (the ones it sends). */
const profileFlaky = (addr: string, args: string[], options?: CliOptions): Promise<CliResult> =>
  runCli(["-m", "flaky", "-u", addr, ...args, "--output-tensor-format", "json"], options);

const OK = () =>
  Response.json({
    model_name: "flaky",
    outputs: [{ name: "OUT", datatype: "INT32", shape: [4], data: [1, 2, 3, 4] }],
  });

Deno.test("HTTP 500s are counted, grouped by message and reported; the run continues", async () => {
  const server = fakeServer((n) =>
    n % 4 === 0 ? Response.json({ error: "injected failure" }, { status: 500 }) : OK()
  );
  const dir = await Deno.makeTempDir();
  try {
    const r = await profileFlaky(server.addr, [
      "-p",
      "300",
      "-s",
      "100",
      "--concurrency-range",
      "2",
      "-f",
      `${dir}/perf.csv`,
    ]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /Failed requests: \d+\n\s+\d+ x .*injected failure/);
    assert.match(r.stderr, /requests failed/);
    const [header, row] = parseCsv(await Deno.readTextFile(`${dir}/perf.csv`));
    assert.equal(header!.at(-1), "Errors");
    assert.ok(Number(row!.at(-1)) > 0);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server dying mid-run: exit 3, measured levels are still written", async () => {
  const server: ReturnType<typeof fakeServer> = fakeServer((n) => {
    if (n === 50) queueMicrotask(() => server.stop());
    return OK();
  });
  const dir = await Deno.makeTempDir();
  try {
    const r = await profileFlaky(server.addr, [
      "--request-count",
      "50",
      "--concurrency-range",
      "1:3",
      "-f",
      `${dir}/perf.csv`,
    ], { timeoutMs: 30_000 });
    assert.equal(r.code, 3, r.stderr + r.stdout);
    assert.match(r.stderr, /^error: No valid requests recorded/m);
    const rows = parseCsv(await Deno.readTextFile(`${dir}/perf.csv`));
    assert.equal(rows.length, 2, "the first level is in the CSV");
    assert.equal(rows[1]![0], "1");
  } finally {
    await server.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--request-timeout fails slow requests with a message naming the timeout", async () => {
  const server = fakeServer(async () => {
    await new Promise((r) => setTimeout(r, 300));
    return OK();
  });
  try {
    const r = await profileFlaky(
      server.addr,
      ["--request-count", "4", "--request-timeout", "50"],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 3, r.stderr + r.stdout);
    assert.match(r.stderr, /4 requests failed, most with: .*timed out after 50 ms/);
  } finally {
    await server.stop();
  }
});
