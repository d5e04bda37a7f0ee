/**
 * --service-kind openai end to end against the reference server, whose LLM
 * models stream tokens on a known schedule. Time to first token, inter-token
 * latency, token throughput and goodput must match that ground truth within
 * 3 % at concurrency 1 and 8 and at a fixed request rate (at 64, see BURST),
 * in every output
 * (console, summary JSON, genai-perf's CSV, profile export, HTML report).
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { chartMarks, chromium, renderedDom, withoutScripts } from "./_chromium.ts";
import { loadSchema, validate } from "./_json_schema.ts";
import { parseCsv, runCli } from "./_helpers.ts";

const TTFT_MS = 200;
const ITL_MS = 10;
const TOKENS = 40;
/** Send to last token of every answer. */
const LATENCY_MS = TTFT_MS + (TOKENS - 1) * ITL_MS;
const TOLERANCE = 0.03;
/**
 * At concurrency 64 every answer's tokens fall due at the same instants: the
 * server (in the test's worker thread, on the same two cores as the client
 * and other suites) reads 64 requests and writes 64 first tokens one after
 * the other, so the last ones start late. Measured under the full suite's
 * load (load average 6), first-token latencies came up to 9.8 % over the
 * schedule, answers up to 3.3 %; with the server in its own process at load
 * average 2.7, 2.5-3.1 % and 1.3-1.6 %. The gaps between tokens (ITL) are
 * held to 3 % at every concurrency.
 */
const BURST = { toToken: 0.12, toEnd: 0.05 };

const MODELS = [
  // Each token moves by up to 3 ms on its own: gaps vary, answers still end on time.
  { name: "llm", llm: { ttft_ms: TTFT_MS, itl_ms: ITL_MS, itl_jitter_ms: 3, output_tokens: 64 } },
  { name: "quiet", llm: { ttft_ms: 100, itl_ms: 10, output_tokens: 12, usage: false } },
  // A thinking model: the first 5 of its 12 tokens are reasoning_content.
  { name: "thinking", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 12, reasoning_tokens: 5 } },
  // Like llama.cpp: the connection closes after each streamed answer, unannounced.
  { name: "closing", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 4, close_after_stream: true } },
  ...(["event", "abort", "truncate"] as const).map((kind) => ({
    name: `failing_${kind}`,
    llm: {
      ttft_ms: 2,
      itl_ms: 1,
      output_tokens: 6,
      error_rate: 0.25,
      error_after_tokens: 3,
      error_kind: kind,
    },
  })),
];

type Json = Record<string, unknown>;
type Statistics = Record<string, number>;

/**
 * A latency that the server's timers set, of requests sent one at a time: it
 * cannot come early, and comes late by the first request's connection and
 * cold code and by timers firing late on the loaded cores, as the answers of
 * a burst do (full CI runs saw 3.03 % and 3.08 % over).
 */
function notEarly(actual: number, expected: number, what: string): void {
  assert.ok(actual >= expected, `${what}: ${actual.toFixed(3)} under ${expected}`);
  within(actual, expected, what, BURST.toEnd);
}

function within(actual: number, expected: number, what: string, tolerance = TOLERANCE): void {
  const error = Math.abs(actual - expected) / expected;
  assert.ok(
    error <= tolerance,
    `${what}: ${actual.toFixed(3)} vs ${expected} (${(error * 100).toFixed(2)} % off)`,
  );
}

interface Run {
  stdout: string;
  code: number;
  summary: Json;
  /** The first level's `llm` object. */
  llm: Json;
  /** --llm-csv's text (genai-perf's layout). */
  csv: string;
  /** -f's text (perf_analyzer's layout). */
  perfCsv: string;
}

async function profile(
  server: { addr: string },
  options: { args: string[]; dir?: string; expectCode?: number },
): Promise<Run> {
  const dir = options.dir ?? await Deno.makeTempDir();
  try {
    const summaryPath = `${dir}/summary.json`;
    const csvPath = `${dir}/llm.csv`;
    const perfCsvPath = `${dir}/perf.csv`;
    const r = await runCli([
      "--service-kind",
      "openai",
      "-u",
      server.addr,
      "--summary-json",
      summaryPath,
      "--llm-csv",
      csvPath,
      "-f",
      perfCsvPath,
      ...options.args,
    ], { timeoutMs: 120_000 });
    assert.equal(r.code, options.expectCode ?? 0, r.stderr + r.stdout);
    const summary = JSON.parse(await Deno.readTextFile(summaryPath));
    assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
    return {
      stdout: r.stdout,
      code: r.code,
      summary,
      llm: summary.levels[0].llm,
      csv: await Deno.readTextFile(csvPath),
      perfCsv: await Deno.readTextFile(perfCsvPath),
    };
  } finally {
    if (options.dir === undefined) await Deno.remove(dir, { recursive: true });
  }
}

/** Runs `fn` against a reference server of MODELS in a worker thread. */
async function withLlmServer(fn: (server: { addr: string }) => Promise<void>): Promise<void> {
  const server = await startServerInWorker({ models: MODELS });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The streamed chat run of the accuracy tests: TOKENS tokens per answer, exactly. */
const STREAMED = [
  "-m",
  "llm",
  "--endpoint",
  "v1/chat/completions",
  "--streaming",
  "--output-tokens-mean",
  String(TOKENS),
  "--output-tokens-mean-deterministic",
  "--synthetic-input-tokens-mean",
  "32",
  "--num-prompts",
  "4",
  "--tokenizer",
  "cl100k_base",
];

/**
 * The checks every accuracy run passes. Per-request latencies are judged by
 * their median, which one stall of a loaded machine cannot move; the ITL and
 * rates average over every token.
 */
function checkAccuracy(llm: Json, options: { concurrency?: number }): void {
  const stat = (key: string) => llm[key] as Statistics;
  const burst = options.concurrency === 64;
  const toToken = burst ? BURST.toToken : TOLERANCE;
  const toEnd = burst ? BURST.toEnd : TOLERANCE;
  within(stat("time_to_first_token_ms").p50, TTFT_MS, "TTFT p50", toToken);
  // From the first token to the second: one gap, moved by the second token's jitter (+-3 ms),
  // shorter when the first was read late on the loaded cores (6.26 ms seen in a full run). It is
  // the mean gap at position 1 by definition.
  const ttst = stat("time_to_second_token_ms");
  assert.ok(
    ttst.p50 >= ITL_MS - 3 - 1.5 && ttst.p50 <= (ITL_MS + 3) * (1 + toToken),
    `TTST p50 ${ttst.p50}`,
  );
  const byPosition = llm.inter_chunk_latency_by_position_ms as number[];
  assert.ok(Math.abs(ttst.avg - byPosition[0]) < 1e-9, `${ttst.avg} vs ${byPosition[0]}`);
  within(stat("request_latency_ms").p50, LATENCY_MS, "request latency p50", toEnd);
  within(stat("inter_token_latency_ms").avg, ITL_MS, "ITL avg");
  within(stat("inter_chunk_latency_ms").avg, ITL_MS, "every gap, avg");
  // genai-perf's and AIPerf's per-user throughput: 1 / ITL of each request.
  within(
    stat("output_token_throughput_per_user_tokens_per_sec_user").p50,
    1000 / ITL_MS,
    "tokens/s/user",
  );
  const perRequest = TOKENS / (LATENCY_MS / 1000);
  assert.equal(stat("output_sequence_length_tokens").min, TOKENS);
  assert.equal(stat("output_sequence_length_tokens").max, TOKENS);
  // ISL is the prompt's own count; the server's (chat template included) is beside it.
  assert.deepEqual(llm.token_counts, { output: "usage", input: "tokenizer cl100k_base" });
  assert.equal(stat("input_sequence_length_tokens").avg, 32);
  assert.equal(stat("server_input_sequence_length_tokens").avg, 32 + 28);
  within(stat("prefill_throughput_tokens_per_sec").p50, 32 / (TTFT_MS / 1000), "prefill", toToken);
  if (options.concurrency !== undefined) {
    within(
      llm.output_token_throughput_tokens_per_sec as number,
      options.concurrency * perRequest,
      `output tokens/s at concurrency ${options.concurrency}`,
      toEnd,
    );
  }
  // Every answer meets the objectives of GOODPUT.
  within(
    llm.request_goodput_per_sec as number,
    llm.request_throughput_per_sec as number,
    "goodput",
  );
}

const GOODPUT = [
  "--goodput",
  `time_to_first_token:${TTFT_MS * 1.5}`,
  `inter_token_latency:${ITL_MS * 1.5}`,
  `request_latency:${LATENCY_MS * 1.5}`,
];

Deno.test("openai: metrics match the server's schedule at concurrency 1, 8 and 64", (t) =>
  withLlmServer(async (server) => {
    for (const [concurrency, rounds] of [[1, 5], [8, 3], [64, 4]]) {
      await t.step(`concurrency ${concurrency}`, async () => {
        const run = await profile(server, {
          args: [
            ...STREAMED,
            ...GOODPUT,
            "--concurrency-range",
            String(concurrency),
            "--request-count",
            String(concurrency * rounds),
          ],
        });
        checkAccuracy(run.llm, { concurrency });
        assert.equal(run.llm.request_count, concurrency * rounds);
      });
    }
  }));

Deno.test("openai: a fixed request rate, measured also from the intended send time", () =>
  withLlmServer(async (server) => {
    const html = await Deno.makeTempFile({ suffix: ".html" });
    const run = await profile(server, {
      args: [
        "--report-html",
        html,
        ...STREAMED,
        ...GOODPUT,
        "--request-rate-range",
        "20",
        "--request-count",
        "30",
        // The lag of a loaded test machine is not what this test is about.
        "--ignore-send-lag",
        "--slice-duration",
        "0.5",
      ],
    });
    checkAccuracy(run.llm, {});
    // Time slices: the 30 sends of 1.5 s in three slices of 0.5 s, each with every metric.
    const slices = run.llm.time_slices as Array<{ start_s: number; end_s: number; llm: Json }>;
    assert.ok(slices.length >= 3, `${slices.length} slices`);
    assert.equal(slices.reduce((n, s) => n + (s.llm.request_count as number), 0), 30);
    for (const slice of slices.slice(0, 3)) {
      assert.equal(slice.end_s - slice.start_s, 0.5);
      const ttft = slice.llm.time_to_first_token_ms as Statistics;
      notEarly(ttft.p50, TTFT_MS, `TTFT p50 of the slice from ${slice.start_s} s`);
      within(slice.llm.request_throughput_per_sec as number, 20, "slice request rate", 0.25);
    }
    assert.equal(
      run.stdout.match(/^ {4}Slice [\d.]+-[\d.]+ s: time_to_first_token avg/gm)?.length,
      slices.length,
    );
    const page = await Deno.readTextFile(html);
    await Deno.remove(html);
    assert.equal(
      page.split("<td>Time To First Token (ms)</td>").length - 1,
      1 + slices.length,
      "the level's row and each slice's",
    );
    assert.ok(page.includes("<td>20, 0-0.5 s</td>"));
    assert.equal(
      parseCsv(run.csv).filter((row) => row[0] === "Time Slice (s)").length,
      slices.length,
    );
    const corrected = run.llm.corrected_time_to_first_token_ms as Statistics;
    assert.ok(corrected.avg >= (run.llm.time_to_first_token_ms as Statistics).avg);
    within(
      run.llm.output_token_throughput_tokens_per_sec as number,
      (run.llm.request_throughput_per_sec as number) * TOKENS,
      "output tokens/s",
    );
  }));

Deno.test("openai: every output carries the LLM metrics", () =>
  withLlmServer(async (server) => {
    await withDir(async (dir) => {
      const exported = `${dir}/export.json`;
      const html = `${dir}/report.html`;
      const run = await profile(server, {
        dir,
        args: [
          ...STREAMED,
          "--goodput",
          "time_to_first_token:1",
          "--concurrency-range",
          "2:4:2",
          "--request-count",
          "8",
          "--profile-export-file",
          exported,
          "--report-html",
          html,
        ],
      });
      assert.equal(run.llm.request_goodput_per_sec, 0, "a 1 ms TTFT is out of reach");
      // Console: genai-perf's metric names and units, and where the counts came from.
      assert.match(
        run.stdout,
        / {2}LLM \(output tokens: usage; input tokens: tokenizer cl100k_base\): \n/,
      );
      assert.match(run.stdout, /Time To First Token \(ms\): avg \d+\.\d\d, std/);
      assert.match(run.stdout, /Output Token Throughput \(tokens\/sec\): /);
      assert.match(run.stdout, /Goodput: 0 of 8 requests met time_to_first_token:1/);

      // CSV: genai-perf's layout, one block per level after a line naming it.
      const rows = parseCsv(run.csv);
      assert.deepEqual(rows[0], ["Concurrency", "2"]);
      assert.deepEqual(rows[1], [
        "Metric",
        "avg",
        "min",
        "max",
        "p99",
        "p95",
        "p90",
        "p75",
        "p50",
        "p25",
        "p10",
        "p5",
        "p1",
        "std",
      ]);
      const ttft = rows.find((row) => row[0] === "Time To First Token (ms)")!;
      within(Number(ttft[1]), TTFT_MS, "CSV TTFT");
      const names = rows.map((row) => row[0]);
      for (
        const name of [
          "Time To Second Token (ms)",
          "Request Latency (ms)",
          "Inter Token Latency (ms)",
          "Output Token Throughput Per User (tokens/sec/user)",
          "Output Sequence Length (tokens)",
          "Input Sequence Length (tokens)",
          "Output Token Throughput (tokens/sec)",
          "Request Throughput (per sec)",
          "Request Goodput (per sec)",
          "Request Count (count)",
        ]
      ) assert.ok(names.includes(name), name);
      assert.deepEqual(rows.find((row) => row[0] === "Output Token Counts"), [
        "Output Token Counts",
        "usage",
      ]);
      assert.ok(rows.some((row) => row[0] === "Concurrency" && row[1] === "4"), "second level");
      // -f: perf_analyzer's CSV whatever the service kind (no server columns without Triton).
      const perf = parseCsv(run.perfCsv);
      assert.deepEqual(perf[0].slice(0, 4), [
        "Concurrency",
        "Inferences/Second",
        "Client Send",
        "Client Recv",
      ]);
      assert.deepEqual(perf.slice(1).map((row) => row[0]).sort(), ["2", "4"]);

      // Export: perf_analyzer's one response per event with its text, plus token counts.
      const exportData = parseProfileExport(await Deno.readTextFile(exported));
      assert.deepEqual(validate(exportData, await loadSchema("profile_export.schema.json")), []);
      const [first] = exportData.experiments[0].requests;
      const events = first.response_outputs.map((output) => output.response as string);
      assert.equal(first.response_timestamps.length, events.length, "one timestamp per event");
      assert.ok(events.every((event) => /^data: .*\n\n$/s.test(event)), events[0]);
      assert.equal(events.at(-1), "data: [DONE]\n\n");
      const texts = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)))
        .filter((chunk) => chunk.choices?.[0]?.delta?.content);
      assert.equal(texts.length, TOKENS, "one event per token");
      assert.equal(first.inferperf_output_tokens, TOKENS);
      assert.equal(first.inferperf_token_source, "usage");
      assert.equal(first.inferperf_input_tokens, 32, "the prompt's own tokens");
      assert.equal(first.inferperf_server_input_tokens, 32 + 28, "and the chat template's");
      const body = JSON.parse(first.request_inputs.payload as string);
      assert.deepEqual([body.max_tokens, body.min_tokens, body.ignore_eos], [TOKENS, TOKENS, true]);
      assert.deepEqual(body.stream_options, { include_usage: true });

      // HTML: every LLM metric of both levels in a table...
      const page = await Deno.readTextFile(html);
      for (const title of ["Time To Second Token (ms)", "Prefill Throughput (tokens/sec)"]) {
        assert.equal(page.split(`<td>${title}</td>`).length - 1, 2, title);
      }
      // ...and the LLM charts, drawn by Chromium, filling the page's width.
      if ("reason" in chromium) return;
      const dom = await renderedDom(page);
      assert.match(dom, /<html[^>]*data-rendered="true"/);
      assert.doesNotMatch(withoutScripts(dom), /data-render-error/);
      const fill = Number(/data-chart-fill="([\d.]+)"/.exec(dom)![1]);
      assert.ok(fill > 0.98, `charts take ${fill} of the page's width`);
      const marks = Object.fromEntries(chartMarks(dom));
      assert.deepEqual(marks["llm-ttft"], { points: 2 * 9, bars: 0 });
      assert.deepEqual(marks["llm-latency"], { points: 2 * 9, bars: 0 });
      assert.deepEqual(marks["llm-itl-position"], { points: 2 * (TOKENS - 1), bars: 0 });
      assert.deepEqual(marks["llm-throughput"], { points: 0, bars: 2 });
      assert.deepEqual(marks["llm-ttft-input"], { points: 2 * 8, bars: 0 });
    });
  }));

Deno.test("openai: reasoning tokens are counted apart, and within the output length", () =>
  withLlmServer(async (server) => {
    const run = await profile(server, {
      args: [
        ...["-m", "thinking", "--endpoint", "v1/chat/completions", "--streaming"],
        ...["--synthetic-input-tokens-mean", "8", "--request-count", "6", "--tokenizer", "llama"],
      ],
    });
    const stat = (key: string) => run.llm[key] as Statistics;
    // The server sends no completion_tokens_details: the tokenizer counts the reasoning text.
    assert.deepEqual([
      stat("reasoning_token_count_tokens").min,
      stat("reasoning_token_count_tokens").max,
    ], [5, 5]);
    assert.equal(stat("output_sequence_length_tokens").avg, 12, "usage: reasoning included");
    assert.match(run.stdout, /Reasoning Token Count \(tokens\): avg 5,/);
    assert.ok(parseCsv(run.csv).some((row) => row[0] === "Reasoning Token Count (tokens)"));
  }));

Deno.test("openai: mid-stream errors are failed requests, whatever their kind", (t) =>
  withLlmServer(async (server) => {
    const causes: Record<string, string> = {
      event: "error event in the stream",
      abort: "connection closed by the server",
      truncate: "stream ended without [DONE]",
    };
    for (const kind of ["event", "abort", "truncate"]) {
      await t.step(kind, async () => {
        const run = await profile(server, {
          expectCode: 3,
          args: [
            "-m",
            `failing_${kind}`,
            "--endpoint",
            "v1/chat/completions",
            "--streaming",
            "--synthetic-input-tokens-mean",
            "4",
            "--concurrency-range",
            "2",
            "--request-count",
            "20",
          ],
        });
        const client = run.summary.levels as Json[];
        const level = client[0].client as Json;
        // Every fourth answer fails after three tokens.
        assert.equal(level.error_count, 5);
        assert.equal(run.llm.request_count, 15);
        assert.match(run.stdout, /Failed requests/);
        assert.ok(
          parseCsv(run.csv).some((row) =>
            row[0] === "Failed Request Count (count)" && row[1] === "5.00"
          ),
        );
        // The error summary: by cause in every output.
        const cause = causes[kind];
        assert.deepEqual((level.error_causes as Json[]).map((e) => [e.cause, e.count]), [
          [cause, 5],
        ]);
        assert.ok(run.stdout.includes(`by cause: ${cause} 5`), run.stdout);
        assert.ok(
          parseCsv(run.csv).some((row) =>
            row[0] === `Failed Requests: ${cause} (count)` && row[1] === "5.00"
          ),
        );
      });
    }
  }));

Deno.test("openai: without usage the tokenizer counts; Triton's generate; embeddings", (t) =>
  withLlmServer(async (server) => {
    const quiet = ["-m", "quiet", "--synthetic-input-tokens-mean", "50", "--request-count", "6"];
    await t.step(
      "chat without usage: the tokenizer counts prompts and answers",
      async () => {
        const run = await profile(server, {
          args: [...quiet, "--endpoint", "v1/chat/completions", "--streaming"],
        });
        assert.deepEqual(run.llm.token_counts, {
          output: "tokenizer llama",
          input: "tokenizer llama",
        });
        // Synthetic prompts are exactly as long as asked, in the tokenizer's tokens.
        assert.equal((run.llm.input_sequence_length_tokens as Statistics).avg, 50);
        // The server's twelve words, "the quick brown dog ...", are twelve LLaMA tokens.
        assert.equal((run.llm.output_sequence_length_tokens as Statistics).avg, 12);
      },
    );
    await t.step("--tokenizer none counts chunks", async () => {
      const run = await profile(server, {
        args: [...quiet, "--endpoint", "v1/completions", "--streaming", "--tokenizer", "none"],
      });
      assert.deepEqual(run.llm.token_counts, { output: "chunks", input: "unknown" });
      assert.equal((run.llm.output_sequence_length_tokens as Statistics).avg, 12);
    });
    for (const endpoint of ["generate_stream", "generate"]) {
      await t.step(`v2/models/quiet/${endpoint}`, async () => {
        const run = await profile(server, {
          args: [...quiet, "--endpoint", `v2/models/quiet/${endpoint}`],
        });
        const streamed = endpoint === "generate_stream";
        assert.equal(run.llm.time_to_first_token_ms !== undefined, streamed);
        if (streamed) {
          // The median: the first of six requests pays the connection and cold code (one full
          // CI run's average came 9 % over).
          notEarly((run.llm.time_to_first_token_ms as Statistics).p50, 100, "generate TTFT p50");
          within((run.llm.inter_token_latency_ms as Statistics).avg, 10, "generate ITL");
        }
        assert.equal((run.llm.output_sequence_length_tokens as Statistics).avg, 12);
      });
    }
    await t.step("v1/embeddings: request latency and throughput", async () => {
      const run = await profile(server, {
        args: ["-m", "llm", "--endpoint", "v1/embeddings", "--request-count", "4"],
      });
      assert.equal(run.llm.time_to_first_token_ms, undefined);
      assert.equal(run.llm.request_count, 4);
      assert.equal((run.llm.input_sequence_length_tokens as Statistics).avg, 550);
      notEarly((run.llm.request_latency_ms as Statistics).avg, TTFT_MS, "embeddings latency");
    });
  }));

Deno.test("openai: payload files and JSONL prompts; a server closing connections", (t) =>
  withLlmServer(async (server) => {
    await t.step("payload files, answers not streamed", () =>
      withDir(async (dir) => {
        const payloads = `${dir}/payloads.json`;
        await Deno.writeTextFile(
          payloads,
          JSON.stringify({
            data: [
              { payload: [{ prompt: "one two three", max_tokens: 4 }] },
              { payload: [{ model: "quiet", prompt: "four five", max_tokens: 4 }] },
            ],
          }),
        );
        const run = await profile(server, {
          dir,
          args: [
            ...["-m", "quiet", "--endpoint", "v1/completions", "--input-data", payloads],
            "--request-count",
            "4",
          ],
        });
        assert.equal((run.llm.output_sequence_length_tokens as Statistics).avg, 4);
        assert.equal(run.llm.time_to_first_token_ms, undefined, "not streamed");
      }));
    await t.step("--input-file with genai-perf's JSONL", () =>
      withDir(async (dir) => {
        const prompts = `${dir}/prompts.jsonl`;
        await Deno.writeTextFile(prompts, '{"text": "What is a llama?"}\n{"text_input": "Why?"}\n');
        const run = await profile(server, {
          dir,
          args: [
            ...["-m", "quiet", "--endpoint", "v1/chat/completions", "--streaming"],
            "--input-file",
            prompts,
            "--request-count",
            "4",
          ],
        });
        // The server's usage is off: the tokenizer counted "What is a llama?" and "Why?".
        const input = run.llm.input_sequence_length_tokens as Statistics;
        assert.deepEqual([input.min, input.max], [2, 6]);
      }));
    await t.step(
      "a server closing keep-alive connections after each stream",
      async () => {
        const run = await profile(server, {
          args: [
            "-m",
            "closing",
            "--endpoint",
            "v1/chat/completions",
            "--streaming",
            "--synthetic-input-tokens-mean",
            "4",
            "--request-count",
            "30",
          ],
        });
        assert.doesNotMatch(run.stdout, /Failed requests/);
        assert.equal((run.llm.output_sequence_length_tokens as Statistics).avg, 4);
      },
    );
  }));
