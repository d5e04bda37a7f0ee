/**
 * Production traces end to end against the reference server: BurstGPT's and
 * Azure's CSV (fixtures/traces, in their published columns) replayed at
 * their times with --replay-speedup and --replay-max-gap, or at the load
 * mode's pace with --replay-ignore-timestamps, every request's prompt and
 * answer as long as its row says (the server counts them); AIPerf's raw
 * payloads and inputs.json sent as written.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { runCli } from "./_helpers.ts";

type Json = Record<string, unknown>;
type Metric = { value: number };

const FIXTURES = new URL("../fixtures/traces/", import.meta.url).pathname;

async function withServer(fn: (addr: string, dir: string) => Promise<void>) {
  const server = await startServerInWorker({
    models: [{ name: "llm", llm: { ttft_ms: 5, itl_ms: 1, output_tokens: 50 } }],
  });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_traces_" });
  try {
    await fn(server.addr, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
}

async function records(path: string): Promise<Json[]> {
  return (await Deno.readTextFile(path)).trimEnd().split("\n").map((l) => JSON.parse(l));
}

const metric = (line: Json, name: string) => ((line.metrics as Json)[name] as Metric).value;

Deno.test("BurstGPT and Azure traces: each row's lengths, at its time or the load's pace", async () => {
  await withServer(async (addr, dir) => {
    const base = ["-m", "llm", "--service-kind", "openai", "--endpoint-type", "completions"];
    const burst = await runCli([
      ...base,
      ...["-u", addr, "--input-file", `${FIXTURES}burstgpt.csv`],
      ...["--custom-dataset-type", "burstgpt_trace", "--replay-speedup", "2"],
      ...["--replay-max-gap", "500", "--profile-export-jsonl", `${dir}/b.jsonl`],
    ], { timeoutMs: 60_000 });
    assert.equal(burst.code, 0, burst.stderr);
    assert.match(burst.stdout, /Request count: 4/);
    const lines = await records(`${dir}/b.jsonl`);
    const starts = lines.map((l) => (l.metadata as Json).request_start_ns as number);
    const offsets = starts.map((s) => (s - Math.min(...starts)) / 1e6).sort((a, b) => a - b);
    // 0, 0.4 and 1.2 s at twice the speed, then an hour's gap capped at 500 ms.
    [0, 200, 600, 1100].forEach((expected, i) => {
      assert.ok(
        offsets[i] >= expected - 20 && offsets[i] < expected + 800,
        `request ${i} sent at ${offsets[i]} ms, due at ${expected}`,
      );
    });
    const lengths = lines.map((l) => [
      metric(l, "input_sequence_length"),
      metric(l, "server_input_sequence_length"),
      metric(l, "server_output_sequence_length"),
    ]).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(lengths, [[12, 12, 4], [18, 18, 9], [24, 24, 6], [30, 30, 5]]);

    const azure = await runCli([
      ...base,
      ...["-u", addr, "--input-file", `${FIXTURES}azure_conv.csv`],
      ...["--custom-dataset-type", "azure_trace", "--replay-ignore-timestamps"],
      ...["--concurrency-range", "2", "--request-count", "4"],
      ...["--profile-export-jsonl", `${dir}/a.jsonl`],
    ], { timeoutMs: 60_000 });
    assert.equal(azure.code, 0, azure.stderr);
    const served = (await records(`${dir}/a.jsonl`))
      .map((l) => [metric(l, "server_input_sequence_length"), metric(l, "output_sequence_length")])
      .sort((a, b) => a[0] - b[0]);
    assert.deepEqual(served, [[11, 27], [31, 8], [48, 10], [74, 14]]);

    const clash = await runCli([
      ...base,
      ...["-u", addr, "--input-file", `${FIXTURES}azure_conv.csv`],
      ...["--custom-dataset-type", "azure_trace", "--replay-ignore-timestamps"],
      ...["--fixed-schedule", "--replay-speedup", "0"],
    ]);
    assert.equal(clash.code, 1);
    assert.match(
      clash.stderr,
      /--replay-ignore-timestamps and --fixed-schedule exclude each other/,
    );
    assert.match(clash.stderr, /Invalid value "0" for --replay-speedup: expected a number > 0/);
  });
});

Deno.test("AIPerf's raw payloads and inputs.json: every body sent as written", async () => {
  await withServer(async (addr, dir) => {
    for (
      const [type, file, count] of [
        ["raw_payload", "raw_payload.jsonl", 2],
        ["aiperf_inputs", "aiperf_inputs.json", 2],
      ] as const
    ) {
      const r = await runCli([
        ...["-m", "llm", "--service-kind", "openai", "--endpoint-type", "chat", "-u", addr],
        ...["--input-file", `${FIXTURES}${file}`, "--custom-dataset-type", type],
        ...["--concurrency-range", "1", "--request-count", String(count)],
        ...["--profile-export-file", `${dir}/${type}.json`],
      ], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      const bodies = parseProfileExport(await Deno.readTextFile(`${dir}/${type}.json`))
        .experiments[0].requests.map((q) =>
          JSON.parse((q.request_inputs as Json).payload as string)
        );
      assert.equal(bodies.length, count);
      if (type === "raw_payload") {
        assert.deepEqual(bodies[0].messages[0], { role: "system", content: "be brief" });
        assert.equal(bodies[0].temperature, 0.2);
        assert.equal(bodies[1].stream, true);
      } else {
        assert.deepEqual(bodies.map((b) => b.max_tokens), [4, 2]);
      }
    }
  });
});
