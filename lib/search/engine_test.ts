import assert from "node:assert/strict";
import { UsageError } from "../types/errors.ts";
import { buildEngineSearchConfig } from "./engine_config.ts";
import { paretoFront } from "./engine_html.ts";
import {
  engineVariants,
  fillPlaceholders,
  formatCommand,
  parseConstraint,
  splitCommand,
} from "./engine_variants.ts";
import { launch, readLog } from "./_process.ts";

Deno.test("a command template splits once, as a shell splits words, expanding nothing", () => {
  assert.deepEqual(
    splitCommand(`llama-server -m '/models/my model.gguf' --alias "a \\"b\\"" x\\ y $HOME`),
    ["llama-server", "-m", "/models/my model.gguf", "--alias", 'a "b"', "x y", "$HOME"],
  );
  assert.deepEqual(splitCommand(`a '' "" b`), ["a", "", "", "b"]);
  assert.throws(() => splitCommand(`a 'b`), /unclosed ' quote/);
});

Deno.test("a placeholder's value stays inside its argument: spaces, quotes and ; never split", () => {
  const value = `x; rm -rf / "q' $(id)`;
  assert.deepEqual(
    fillPlaceholders(["--alias", "{name}", "--port={port}", "{unknown}"], { name: value, port: 9 }),
    ["--alias", value, "--port=9", "{unknown}"],
  );
  // The command line shown for copying reads back to the same arguments.
  const shown = formatCommand(["serve", "--alias", value]);
  assert.deepEqual(splitCommand(shown), ["serve", "--alias", value]);
});

Deno.test("the process wrapper hands every argument to the program whole", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const log = `${dir}/out.log`;
    const value = `a b; echo injected "q' $(echo sub)`;
    const process = await launch(["printf", "[%s]\\n", value, "{x}"], { log });
    assert.ok(process);
    assert.equal((await process.status).code, 0);
    assert.equal(readLog(log), `[${value}]\n[{x}]\n`);
    assert.equal(await launch(["no-such-program-inferperf"], { log }), undefined);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("constraints between parameters compare arithmetic of their values", () => {
  const c = parseConstraint("ctx_size >= parallel * 512");
  assert.deepEqual(c.names.sort(), ["ctx_size", "parallel"]);
  assert.equal(c.holds({ ctx_size: 2048, parallel: 4 }), true);
  assert.equal(c.holds({ ctx_size: 2048, parallel: 8 }), false);
  assert.equal(parseConstraint("(a + 1) / 2 != b - 3").holds({ a: 3, b: 5 }), false);
  assert.throws(() => parseConstraint("a * 2"), /expected a comparison/);
  assert.throws(() => parseConstraint("a >= (b"), /not closed/);
  assert.throws(() => parseConstraint("a >= b c"), /unexpected "c"/);
});

Deno.test("variants: every combination the constraints allow; flags appended; names vary", () => {
  const { variants, left } = engineVariants({
    template: ["server", "-m", "{model}", "--port", "{port}", "-c", "{ctx}"],
    env: { THREADS: "{ctx}" },
    parameters: { model: ["/m.gguf"], ctx: [1024, 4096], "-np": [1, 4] },
    // A flag's name is no expression name: this one is written by hand.
    constraints: [{ text: "", names: [], holds: (v) => Number(v.ctx) >= 1024 * Number(v["-np"]) }],
    model: "tiny",
  });
  assert.equal(left, 1);
  assert.deepEqual(variants.map((v) => v.name), [
    "ctx=1024,-np=1",
    "ctx=4096,-np=1",
    "ctx=4096,-np=4",
  ]);
  assert.deepEqual(variants[2]!.command, [
    "server",
    "-m",
    "/m.gguf",
    "--port",
    "{port}",
    "-c",
    "4096",
    "-np",
    "4",
  ]);
  assert.deepEqual(variants[2]!.env, { THREADS: "4096" });
});

function configErrors(
  yaml: Record<string, unknown>,
  extra: Array<[string, string]> = [],
): string[] {
  const raw = new Map<string, string | string[]>([["model-name", "m"], ...extra]);
  for (const [k, v] of Object.entries(yaml)) raw.set(k, [JSON.stringify(v)]);
  try {
    buildEngineSearchConfig(raw);
    return [];
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return error.errors;
  }
}

Deno.test("bad engine input is one line each, every problem at once", () => {
  assert.deepEqual(
    configErrors({
      engine: { command: "srv --port {port} -c {ctx} -m {modle}", constraints: ["ctx >= np * 2"] },
      "engine-parameters": { ctx: [], model: ["a"] },
    }),
    [
      'Parameter "ctx" of engine_parameters has no values',
      "Unknown placeholder {modle} in engine.command: expected a parameter of engine_parameters, {host} or {port}",
      'Parameter "model" of engine_parameters is not used: put {model} in engine.command, or name it as a flag (-model or --model) to append it',
      'Invalid engine.constraints "ctx >= np * 2": np is not a parameter',
    ],
  );
  assert.deepEqual(
    configErrors({ engine: { command: "srv -c {c}" }, "engine-parameters": { c: [1] } }),
    [
      "engine.command needs {port} (the port inferperf gives each start), or give engine.port",
    ],
  );
  assert.deepEqual(configErrors({ engine: { preset: "vlm" } }).slice(0, 1), [
    'Unknown engine.preset "vlm": expected llama.cpp, vllm, sglang, tgi',
  ]);
  assert.deepEqual(
    configErrors({ engine: { url: "127.0.0.1:8000" }, "engine-parameters": { a: [1] } }),
    ["engine_parameters need engine.command: remote mode (engine.url) sweeps only the client's load"],
  );
  assert.deepEqual(
    configErrors({
      engine: { command: "srv --port {port} -c {c}", constraints: ["c > 10"] },
      "engine-parameters": { c: [1, 2] },
    }),
    ["engine.constraints leave none of the 2 combinations of engine_parameters"],
  );
  assert.deepEqual(
    configErrors({ engine: { command: "srv --port {port}", ready: { url: "health" } } }),
    [
      'Invalid engine.ready.url "health": expected a path, /health',
    ],
  );
});

Deno.test("a preset gives the command, readiness and cache reset; flags are parameters", () => {
  const raw = new Map<string, string | string[]>([
    ["model-name", "tiny"],
    ["engine", [JSON.stringify({ preset: "vllm", clear_cache: true })]],
    ["engine-parameters", [JSON.stringify({ model: ["org/model"], "--max-num-seqs": [64, 128] })]],
    ["request-rate-range", "2,4.5"],
    ["constraints", ["max-time_to_first_token_p90=500"]],
  ]);
  const config = buildEngineSearchConfig(raw);
  assert.deepEqual(config.variants.map((v) => v.name), ["--max-num-seqs=64", "--max-num-seqs=128"]);
  assert.deepEqual(config.variants[1]!.command, [
    ...["vllm", "serve", "org/model", "--host", "{host}", "--port", "{port}"],
    ...["--max-num-seqs", "128"],
  ]);
  assert.deepEqual(config.variants[0]!.env, { VLLM_SERVER_DEV_MODE: "1" });
  assert.deepEqual(config.clearCache, {
    kind: "request",
    method: "POST",
    path: "/reset_prefix_cache",
  });
  assert.equal(config.launch.mode === "local" && config.launch.ready.path, "/health");
  assert.deepEqual(config.model.requestRate, [2, 4.5]);

  assert.equal(config.model.goals.constraints[0]!.metric.def.name, "time_to_first_token");
  assert.equal(config.model.goals.constraints[0]!.metric.statistic, "p90");
  assert.equal(config.model.objectives[0]!.metric.def.name, "output_token_throughput");
  assert.equal(config.pointOptions.get("service-kind"), "openai");
  assert.equal(config.pointOptions.has("engine"), false);
});

Deno.test("the Pareto front keeps the points no other beats on both axes", () => {
  assert.deepEqual(
    paretoFront([[100, 200], [50, 300], [60, 250], [40, 290], [100, 150], [10, 300]]),
    [[50, 300], [60, 250], [100, 200]],
  );
});
