/**
 * Engine search end to end with the reference server's tunable engine as
 * the engine (`inferperf serve --llm-slots N`): a decode step of 4 ms + 2 ms
 * per further slot makes 1, 2, 4 slots serve 16-token answers at about 250,
 * 333, 400 tokens/s in all when full and 250, 167, 100 per user, so under
 * an average ITL of at most 8 ms (4 slots: 10 ms) and a TTFT p90 of 100 ms
 * the known best is 2 slots at concurrency 2. Ctrl-C and resume reach the
 * same best; the summary page renders in Chromium; bad input is one line.
 */
import assert from "node:assert/strict";
import { parseCsv, runCli } from "./_helpers.ts";
import { chromium, renderedDom, withoutScripts } from "./_chromium.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** The compiled binary's run grant; env only for the YAML package's source build (the bundle's reads none). */
const PERMISSIONS = [
  ...["--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-run=sh,cat"],
];
const SERVE = [
  Deno.execPath(),
  ...["run", "--allow-net", "--allow-read", MAIN, "serve", "--http-port", "{port}"],
  ...["--grpc-port", "0", "--metrics-port", "0", "--tfserving-port", "-1"],
  ...["--llm-step-ms", "4", "--llm-step-ms-per-slot", "2", "--llm-output-tokens", "16"],
  ...["--llm-prefill-ms-per-token", "0.01"],
];

/** A search config in a new directory: the reference engine with `engine` and `parameters`. */
function setup(
  options: {
    engine?: Record<string, unknown>;
    parameters?: Record<string, unknown>;
    loads?: number[] | string;
    /** More options of the config file. */
    extra?: Record<string, unknown>;
  },
): { dir: string; args: string[] } {
  const dir = Deno.makeTempDirSync({ prefix: "inferperf_engine_" });
  const config = {
    "model-name": "engine",
    "measurement-interval": 1000,
    "stability-percentage": 50,
    streaming: true,
    "concurrency-range": options.loads ?? [1, 2],
    engine: {
      command: [...SERVE, "--llm-slots", "{slots}", "--llm-ctx-size", "{ctx}"],
      ready: { url: "/v1/models", status: 200, timeout: 60 },
      ...options.engine,
    },
    engine_parameters: options.parameters ?? { slots: [1, 2, 4], ctx: [4096] },
    constraints: { time_to_first_token_p90: { max: 100 }, inter_token_latency_avg: { max: 8 } },
    "export-path": dir,
    "checkpoint-directory": `${dir}/checkpoints`,
    ...options.extra,
  };
  // JSON is YAML.
  Deno.writeTextFileSync(`${dir}/engine.yaml`, JSON.stringify(config, null, 2));
  return { dir, args: ["profile", "--config", `${dir}/engine.yaml`] };
}

function rows(dir: string): string[][] {
  return parseCsv(Deno.readTextFileSync(`${dir}/results/metrics-llm-inference.csv`));
}

Deno.test("the search finds the engine's known best; Ctrl-C saves, the same command resumes to it", async () => {
  const { dir, args } = setup({});
  try {
    const once = await runCli(args, {
      permissions: PERMISSIONS,
      signalAt: "[2/3]",
      timeoutMs: 180_000,
    });
    assert.equal(once.code, 130, once.stderr + once.stdout);
    assert.match(once.stdout, /Interrupted: measured points are in .*0\.ckpt/);
    const saved = JSON.parse(Deno.readTextFileSync(`${dir}/checkpoints/0.ckpt`)).points.length;
    assert.ok(saved >= 2, `${saved} points saved`);
    // The engine stopped with the search.
    const resumed = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 180_000 });
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    assert.match(
      resumed.stdout,
      new RegExp(`resuming from checkpoint .*0\\.ckpt \\(points measured: ${saved}\\)`),
    );
    assert.match(resumed.stdout, new RegExp(`from the checkpoint: ${saved}\\)`));
    assert.match(resumed.stdout, /Best slots=2\n\s+at concurrency 2: /);
    assert.match(
      resumed.stdout,
      /avg inter token latency \d+\.\d > 8 msec: higher loads are skipped/,
    );
    assert.match(
      resumed.stdout,
      /Best command line: \S+ run --allow-net --allow-read \S+main\.ts serve --http-port \d+ .* --llm-slots 2 --llm-ctx-size 4096\n/,
    );
    const table = rows(dir);
    const header = table[0]!;
    const at = (name: string) => header.indexOf(name);
    const best = table[1]!;
    assert.deepEqual([
      best[0],
      best[1],
      best[at("Load")],
      best[at("Value")],
      best[at("Satisfies Constraints")],
    ], [
      "slots=2",
      "2",
      "concurrency",
      "2",
      "Yes",
    ]);
    // Each point once: slots 1 and 2 at both loads, 4 slots only at 1 (its ITL broke the bound).
    assert.equal(table.length - 1, 5, table.map((r) => r.slice(0, 5).join(" ")).join("\n"));
    // The ground truth: 2 slots decode 6 ms steps; 16 tokens per answer.
    const itl = Number(best[at("Inter Token Latency avg (ms)")]);
    assert.ok(itl > 5.5 && itl < 8, `ITL ${itl}`);
    assert.equal(best[at("Output Sequence Length avg")], "16.0");
    const four = table.find((r) => r[0] === "slots=4")!;
    assert.equal(four[at("Satisfies Constraints")], "No");
    assert.ok(Number(table.find((r) => r[0] === "slots=1")![at("Server RAM (MB)")]) > 10);
    // `inferperf report` writes the same from the checkpoint, starting nothing.
    const again = await runCli([
      ...[
        "report",
        "--checkpoint-directory",
        `${dir}/checkpoints`,
        "--export-path",
        `${dir}/again`,
      ],
    ], { permissions: PERMISSIONS });
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.match(again.stdout, /Best slots=2\n\s+at concurrency 2: /);
    assert.deepEqual(
      parseCsv(Deno.readTextFileSync(`${dir}/again/results/metrics-llm-inference.csv`)),
      table,
    );
    // Each start has its log.
    assert.deepEqual(Deno.readDirSync(`${dir}/logs`).map((e) => e.name).toArray().sort(), [
      "0_slots=1.log",
      "1_slots=2.log",
      "2_slots=4.log",
    ]);
    if (!("reason" in chromium)) {
      const html = Deno.readTextFileSync(`${dir}/reports/summaries/engine/result_summary.html`);
      const dom = withoutScripts(await renderedDom(html));
      assert.match(dom, /<html[^>]*data-rendered="true"/);
      assert.doesNotMatch(dom, /data-render-error/);
      assert.equal(dom.match(/<circle[^>]*data-point/g)?.length, 3 * 5, "every point on 3 charts");
      assert.equal(dom.match(/<polyline[^>]*data-front/g)?.length, 1);
      assert.equal(dom.match(/data-best=""/g)?.length, 3);
      // The TTFT and ITL constraints, dashed on their charts.
      assert.match(dom, /data-limit="max-time_to_first_token_p90=100"/);
      assert.match(dom, /data-limit="max-inter_token_latency_avg=8"/);
      assert.match(dom, /<pre data-best-command="">[^<]*--llm-slots 2/);
    } else console.log(`engine_search_test: page not rendered: ${chromium.reason}`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a variant that does not start is reported with its log's last lines; the search goes on", async () => {
  // 4 slots in 1024 tokens of context: the engine refuses to start.
  const { dir, args } = setup({ parameters: { slots: [4, 1], ctx: [1024] }, loads: [1] });
  try {
    const run = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 120_000 });
    assert.equal(run.code, 3, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      /failed: The engine exited with code 1 at start; its log ends: .*error: The LLM engine can not start: --llm-ctx-size 1024 leaves each of the 4 slots 256 tokens of context: at least 512 needed .*\(log: \S+0_slots=4\.log\)/,
    );
    assert.match(run.stdout, /Best slots=1/);
    assert.match(run.stderr, /1 variants could not be measured/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bad engine input: one line each, before anything is measured", async () => {
  const cases: Array<[string, Parameters<typeof setup>[0], RegExp, number]> = [
    [
      "missing binary",
      { engine: { command: ["no-such-engine-inferperf", "--port", "{port}"] }, parameters: {} },
      /^error: Can not start the engine "no-such-engine-inferperf": not found \(engine\.command\)$/m,
      1,
    ],
    [
      "unknown placeholder",
      { engine: { command: [...SERVE, "--llm-slots", "{slot}"] }, parameters: { slots: [1] } },
      /Unknown placeholder \{slot\} in engine\.command/,
      1,
    ],
    [
      "a readiness check that never passes",
      {
        engine: { ready: { url: "/nowhere", timeout: 1 } },
        parameters: { slots: [1], ctx: [4096] },
      },
      /failed: The engine was not ready within 1 s \(GET \/nowhere answering 200\); its log ends: .*Serving KServe/,
      3,
    ],
  ];
  for (const [what, options, expected, code] of cases) {
    const { dir, args } = setup({ ...options, loads: [1] });
    try {
      const run = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 60_000 });
      assert.equal(run.code, code, `${what}: ${run.stderr}${run.stdout}`);
      assert.match(run.stdout + run.stderr, expected, what);
      if (what === "missing binary") {
        assert.equal(run.stderr.split("\n").filter((l) => l.startsWith("error:")).length, 1);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { dir, args } = setup({
    engine: { port: (busy.addr as Deno.NetAddr).port },
    parameters: { slots: [1], ctx: [4096] },
  });
  try {
    const run = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 60_000 });
    assert.equal(run.code, 1, run.stderr + run.stdout);
    assert.match(
      run.stderr,
      /^error: engine\.port \d+ is in use: stop what listens there or omit port$/m,
    );
  } finally {
    busy.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("with --search-recipe each variant's point is its capacity: the highest load within the SLOs", async () => {
  // A TTFT p90 of 60 ms holds while no answer waits for a slot: the capacity is the slots.
  const { dir, args } = setup({
    parameters: { slots: [1, 2], ctx: [4096] },
    loads: "1:6",
    extra: { "search-recipe": "max-concurrency-under-sla", slo: ["time_to_first_token:p90<=60"] },
  });
  try {
    const run = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 240_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /\[1\/2\] slots=1\n {2}capacity concurrency 1: /);
    assert.match(run.stdout, /\[2\/2\] slots=2\n {2}capacity concurrency 2: /);
    assert.match(run.stdout, /Best slots=2\n\s+at capacity concurrency 2: /);
    const table = rows(dir);
    assert.deepEqual(table.slice(1).map((r) => [r[0], r[table[0]!.indexOf("Value")]]), [
      ["slots=2", "2"],
      ["slots=1", "1"],
    ]);
    // Each variant's capacity levels are kept beside its log, for a rerun to resume.
    assert.ok(Deno.statSync(`${dir}/logs/1_slots=2.log.capacity.ckpt`).isFile);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("remote mode sweeps the client's load against a running engine; one not ready is one line", async () => {
  const port = (() => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const { port } = listener.addr as Deno.NetAddr;
    listener.close();
    return port;
  })();
  const [program, ...args] = SERVE.map((a) => a === "{port}" ? String(port) : a);
  const engine = new Deno.Command(program!, {
    args: [...args, "--llm-slots", "2"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const { dir, args: cli } = setup({ engine: { url: `127.0.0.1:${port}` }, parameters: {} });
  try {
    // The same file without engine_parameters: remote mode takes none.
    const config = JSON.parse(Deno.readTextFileSync(`${dir}/engine.yaml`));
    delete config.engine_parameters;
    config.engine = { url: `127.0.0.1:${port}`, ready: { url: "/v1/models", timeout: 30 } };
    Deno.writeTextFileSync(`${dir}/engine.yaml`, JSON.stringify(config));
    let ready = false;
    for (let i = 0; i < 100 && !ready; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/v1/models`).then(async (r) => {
        await r.body?.cancel();
        return r.ok;
      }, () => false);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const run = await runCli(cli, { permissions: PERMISSIONS, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      new RegExp(`Engine: the engine at 127\\.0\\.0\\.1:${port} \\(remote\\)`),
    );
    assert.match(run.stdout, /\[1\/1\] default\n {2}concurrency 1: .*\n {2}concurrency 2: /);
    assert.doesNotMatch(run.stdout, /Best command line/);
    assert.equal(rows(dir).length - 1, 2);
  } finally {
    engine.kill("SIGTERM");
    await engine.status;
  }
  try {
    const run = await runCli(cli, { permissions: PERMISSIONS, timeoutMs: 60_000 });
    assert.equal(run.code, 3, run.stderr + run.stdout);
    assert.match(
      run.stderr,
      new RegExp(
        `^error: The engine at engine\\.url 127\\.0\\.0\\.1:${port} is not ready \\(GET /v1/models answering 200\\)$`,
        "m",
      ),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an engine that dies during a point fails its variant; the search goes on", async () => {
  // `timeout` ends the first variant's engine after 4 s, within its sweep.
  const { dir, args } = setup({
    engine: { command: ["timeout", "{lifetime}", ...SERVE, "--llm-slots", "1"] },
    parameters: { lifetime: [4, 600] },
    loads: [1, 2, 3, 4],
  });
  try {
    const run = await runCli(args, { permissions: PERMISSIONS, timeoutMs: 180_000 });
    assert.equal(run.code, 3, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      /\[1\/2\] lifetime=4\n(.*\n)*?\s+failed: The server stopped during the point/,
    );
    assert.match(run.stdout, /Best lifetime=600\n/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
