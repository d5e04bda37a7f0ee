/**
 * The rankings endpoint (NIM's v1/ranking, AIPerf's "rankings" endpoint
 * type): a query and passages per request, answered by the reference server
 * with every passage's index and logit.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { runCli } from "./_helpers.ts";

type Json = Record<string, unknown>;

Deno.test("v1/ranking: queries with their passages, answered with a logit per passage", async () => {
  const server = await startServerInWorker({
    models: [{ name: "reranker", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 1 } }],
  });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_rankings_" });
  try {
    const r = await runCli([
      ...["-m", "reranker", "--service-kind", "openai", "--endpoint", "v1/ranking"],
      ...["-u", server.addr, "--synthetic-input-tokens-mean", "6", "--num-prompts", "5"],
      ...["--rankings-passages", "3", "--concurrency-range", "2", "--request-count", "10"],
      ...["--profile-export-file", `${dir}/e.json`, "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const requests = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests;
    assert.equal(requests.length, 10);
    const body = JSON.parse((requests[0].request_inputs as Json).payload as string);
    assert.deepEqual(Object.keys(body).sort(), ["model", "passages", "query"]);
    assert.equal(body.model, "reranker");
    assert.equal(typeof body.query.text, "string");
    assert.equal(body.passages.length, 3);
    // Passages are the next prompts' texts: the second request's query is the first's passage.
    const second = JSON.parse((requests[1].request_inputs as Json).payload as string);
    assert.equal(body.passages[0].text, second.query.text);
    const answer = JSON.parse(String((requests[0].response_outputs[0] as Json).response));
    assert.deepEqual(answer.rankings.map((x: Json) => x.index), [0, 1, 2]);
    const client = (JSON.parse(await Deno.readTextFile(`${dir}/s.json`)) as { levels: Json[] })
      .levels[0].client as Json;
    assert.equal(client.request_count, 10);
    assert.equal(client.error_count, 0);
    // A malformed ranking request is refused as a server would.
    const bad = await fetch(`http://${server.addr}/v1/ranking`, {
      method: "POST",
      body: JSON.stringify({ model: "reranker", query: "q", passages: [] }),
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /needs 'query'/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
});

Deno.test("rerank: Hugging Face TEI's shape, a query and texts, answered with a bare array of scores", async () => {
  const server = await startServerInWorker({
    models: [{ name: "reranker", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 1 } }],
  });
  const dir = await Deno.makeTempDir({ prefix: "inferperf_rerank_" });
  try {
    const r = await runCli([
      ...["-m", "reranker", "--service-kind", "openai", "--endpoint", "rerank"],
      ...["-u", server.addr, "--synthetic-input-tokens-mean", "6", "--num-prompts", "4"],
      ...["--rankings-passages", "2", "--concurrency-range", "1", "--request-count", "4"],
      ...["--profile-export-file", `${dir}/e.json`],
    ], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Request count: 4/);
    const requests = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`))
      .experiments[0].requests;
    const body = JSON.parse((requests[0].request_inputs as Json).payload as string);
    assert.deepEqual(Object.keys(body).sort(), ["query", "texts"]);
    assert.equal(typeof body.query, "string");
    assert.equal(body.texts.length, 2);
    const answer = JSON.parse(String((requests[0].response_outputs[0] as Json).response));
    assert.ok(Array.isArray(answer));
    assert.deepEqual(answer.map((x: Json) => x.index), [0, 1]);
    assert.ok(answer[0].score > answer[1].score);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
});
