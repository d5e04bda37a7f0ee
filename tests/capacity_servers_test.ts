/**
 * The capacity search against real servers: Triton (tests/_triton.ts, its
 * identity backend's `slow` model: one instance of 10 ms) over HTTP and
 * gRPC, and llama.cpp (tests/_llama.ts: 4 slots) under a TTFT SLO.
 */
import assert from "node:assert/strict";
import { runCli } from "./_helpers.ts";
import { llama, startLlama } from "./_llama.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";

type Json = Record<string, unknown>;

async function search(args: string[]): Promise<{ capacity: Json; stdout: string; levels: Json[] }> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_capacity_" });
  try {
    const cli = await runCli([
      ...args,
      ...["--search-checkpoint", `${dir}/c.ckpt`, "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 240_000 });
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    return { capacity: summary.capacity, stdout: cli.stdout, levels: summary.levels };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

tritonTest(
  "max-concurrency-under-sla: one instance of 10 ms averages c x 10 ms, 3 within 35",
  async () => {
    const server = "reason" in triton ? undefined : await startTriton();
    try {
      for (const [protocol, url] of [["http", server!.http], ["grpc", server!.grpc]]) {
        const { capacity } = await search([
          ...[
            "-m",
            "slow",
            "-u",
            url,
            "-i",
            protocol,
            "--search-recipe",
            "max-concurrency-under-sla",
          ],
          ...["--slo", "request_latency:avg<=35", "-p", "500"],
        ]);
        assert.equal(capacity.value, 3, `${protocol}: ${JSON.stringify(capacity)}`);
        assert.equal((capacity.failing as Json).value, 4);
        assert.ok((capacity.points as number) <= 12, `${protocol}: ${capacity.points} points`);
      }
    } finally {
      await server?.stop();
    }
  },
);

Deno.test({
  name: "llama.cpp: a TTFT SLO holds while every request has a slot (4), not once requests queue",
  ignore: "reason" in llama,
  async fn() {
    const server = await startLlama();
    try {
      const llm = [
        ...["-m", "tiny", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
        ...["-u", server.addr, "--streaming", "--synthetic-input-tokens-mean", "16"],
        ...["--output-tokens-mean", "64", "--output-tokens-mean-deterministic"],
      ];
      // One request alone: how long an answer takes. A request that waits for a slot waits
      // about that long for its first token; one with a slot gets it within a fraction.
      const dir = await Deno.makeTempDir();
      const one = await runCli([
        ...llm,
        ...["--concurrency-range", "1", "--request-count", "4", "--summary-json", `${dir}/s.json`],
      ]);
      assert.equal(one.code, 0, one.stderr);
      const alone = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).levels[0].llm;
      await Deno.remove(dir, { recursive: true });
      const answerMs = alone.request_latency_ms.avg as number;
      const bound = Math.round(answerMs / 2);
      const { capacity, stdout } = await search([
        ...llm,
        ...["--search-recipe", "max-concurrency-under-sla", "--request-count", "24"],
        ...["--slo", `time_to_first_token:p90<=${bound}`],
      ]);
      assert.match(stdout, /Capacity search \(max-concurrency-under-sla\): concurrency \d+\n/);
      const value = capacity.value as number;
      assert.ok(value >= 3 && value <= 5, `answer ${value} (bound ${bound} ms): ${stdout}`);
    } finally {
      await server.stop();
    }
  },
});
