/**
 * --service-kind openai end to end against the reference server, whose LLM
 * models stream tokens on a fixed schedule: the first 30 ms after a request
 * arrives, then one every 10 ms. The reported time to first token and
 * inter-token latency must match that ground truth (wide tolerances for a
 * loaded 2-core machine, tight enough to catch a wrong formula).
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { parseCsv, runCli } from "./_helpers.ts";

const TTFT_MS = 30;
const ITL_MS = 10;
const TOKENS = 8;

const MODELS = [
  { name: "llm", llm: { ttft_ms: TTFT_MS, itl_ms: ITL_MS, output_tokens: 32 } },
  // Like llama.cpp: the connection closes after each streamed answer, unannounced.
  { name: "closing", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 4, close_after_stream: true } },
];

/** The "avg N usec" of a line of the LLM block. */
function average(stdout: string, label: string): number {
  const match = new RegExp(`    ${label}: avg ([\\d.]+)`).exec(stdout);
  assert.ok(match, `no "${label}" line in\n${stdout}`);
  return Number(match[1]);
}

function between(value: number, low: number, high: number, what: string): void {
  assert.ok(value >= low && value <= high, `${what}: ${value} not in [${low}, ${high}]`);
}

Deno.test("openai: streamed chat, token metrics match the server's schedule", async () => {
  const server = await startServerInWorker({ models: MODELS });
  const dir = await Deno.makeTempDir();
  try {
    const csv = `${dir}/llm.csv`;
    const exported = `${dir}/export.json`;
    const common = ["-m", "llm", "--service-kind", "openai", "-u", server.addr];
    const r = await runCli([
      ...common,
      "--endpoint",
      "v1/chat/completions",
      "--streaming",
      "--output-tokens-mean",
      String(TOKENS),
      "--synthetic-input-tokens-mean",
      "24",
      "--num-prompts",
      "3",
      "--concurrency-range",
      "2",
      "--request-count",
      "16",
      "-f",
      csv,
      "--profile-export-file",
      exported,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Service Kind: OPENAI/);
    assert.match(r.stdout, / {2}LLM \(token counts from the server's usage field\): \n/);
    between(average(r.stdout, "Time to first token"), TTFT_MS * 1000, TTFT_MS * 1600, "TTFT");
    between(average(r.stdout, "Inter-token latency"), ITL_MS * 800, ITL_MS * 1300, "ITL");
    const e2e = (TTFT_MS + (TOKENS - 1) * ITL_MS) * 1000;
    between(average(r.stdout, "End-to-end latency"), e2e, e2e * 1.4, "end to end");
    assert.match(r.stdout, /Output tokens per request: avg 8 \(min 8,/);
    assert.match(r.stdout, /Input tokens per request: avg 24 \(min 24,/);

    const [header, row] = parseCsv(await Deno.readTextFile(csv));
    const cell = (name: string) => row![header!.indexOf(name)];
    // perf_analyzer's columns come first, unchanged; the LLM columns follow.
    assert.deepEqual(header!.slice(0, 2), ["Concurrency", "Inferences/Second"]);
    assert.ok(header!.indexOf("Errors") < header!.indexOf("Request Throughput"));
    between(Number(cell("Avg Time To First Token")), TTFT_MS * 1000, TTFT_MS * 1600, "CSV TTFT");
    between(Number(cell("Avg Inter Token Latency")), ITL_MS * 800, ITL_MS * 1300, "CSV ITL");
    assert.equal(cell("Avg Output Tokens"), "8");
    assert.equal(cell("Token Counts"), "usage");
    const throughput = Number(cell("Output Token Throughput"));
    between(throughput / Number(cell("Request Throughput")), 7.99, 8.01, "tokens per request");

    const exportData = parseProfileExport(await Deno.readTextFile(exported));
    assert.equal(exportData.service_kind, "openai");
    assert.equal(exportData.endpoint, "v1/chat/completions");
    const [first] = exportData.experiments[0].requests;
    assert.equal(first.response_timestamps.length, TOKENS, "one timestamp per token");
    const body = JSON.parse(first.request_inputs.payload as string);
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, TOKENS);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openai: payload files, answers not streamed, rate mode from the intended time", async () => {
  const server = await startServerInWorker({ models: MODELS });
  const dir = await Deno.makeTempDir();
  try {
    const payloads = `${dir}/payloads.json`;
    await Deno.writeTextFile(
      payloads,
      JSON.stringify({
        data: [
          { payload: [{ prompt: "one two three", max_tokens: 4 }] },
          { payload: [{ model: "llm", prompt: "four five", max_tokens: 4 }] },
        ],
      }),
    );
    const r = await runCli([
      "-m",
      "llm",
      "--service-kind",
      "openai",
      "-u",
      server.addr,
      "--endpoint",
      "v1/completions",
      "--input-data",
      payloads,
      "--request-rate-range",
      "20",
      "--request-count",
      "8",
      // The lag of a loaded test machine is not what this test is about.
      "--ignore-send-lag",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Output tokens per request: avg 4 \(min 4,/);
    assert.match(r.stdout, /Input tokens per request: avg 2\.5 /);
    // Not streamed: the first token arrives with the whole answer.
    const ttft = average(r.stdout, "Time to first token");
    assert.ok(ttft >= (TTFT_MS + 3 * ITL_MS) * 1000, `TTFT ${ttft}`);
    assert.doesNotMatch(r.stdout, /Inter-token latency/, "one chunk shows no gaps");
    assert.ok(average(r.stdout, "Corrected time to first token") >= ttft);
    assert.match(r.stdout, /Corrected output tokens\/sec per request: avg /);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openai: a server closing keep-alive connections after each stream", async () => {
  const server = await startServerInWorker({ models: MODELS });
  try {
    const r = await runCli([
      "-m",
      "closing",
      "--service-kind",
      "openai",
      "-u",
      server.addr,
      "--endpoint",
      "v1/chat/completions",
      "--streaming",
      "--synthetic-input-tokens-mean",
      "4",
      "--request-count",
      "30",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.doesNotMatch(r.stdout, /Failed requests/);
    // Without stream_options usage the server's chunks are the count; synthetic prompts ask for it.
    assert.match(r.stdout, /Output tokens per request: avg 4 \(min 4,/);
  } finally {
    await server.close();
  }
});
