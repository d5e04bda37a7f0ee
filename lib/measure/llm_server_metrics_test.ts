import assert from "node:assert/strict";
import { llmServerSampleOf, summarizeLlmServer } from "./llm_server_metrics.ts";
import { parsePrometheusText } from "./prometheus.ts";

Deno.test("llama.cpp's and vLLM's families give the same figures", () => {
  const llama = parsePrometheusText(
    "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total 6\n" +
      "llamacpp:prompt_tokens_total 33\nllamacpp:prompt_tokens_cached_total 31\n" +
      "llamacpp:requests_processing 2\nllamacpp:requests_deferred 1\n" +
      "llamacpp:n_decode_total 6\n",
  );
  assert.deepEqual(llmServerSampleOf(llama), {
    generatedTokens: 6,
    promptTokens: 33,
    cachedPromptTokens: 31,
    running: 2,
    waiting: 1,
  });
  // vLLM labels its figures by model: one server serving two sums them.
  const vllm = parsePrometheusText(
    'vllm:generation_tokens_total{model_name="a"} 10\n' +
      'vllm:generation_tokens_total{model_name="b"} 5\n' +
      'vllm:num_requests_running{model_name="a"} 3\n' +
      'vllm:kv_cache_usage_perc{model_name="a"} 0.25\n',
  );
  assert.deepEqual(llmServerSampleOf(vllm), {
    generatedTokens: 15,
    running: 3,
    kvCacheUsage: 0.25,
  });
  assert.equal(llmServerSampleOf(parsePrometheusText("nv_gpu_utilization 1\n")), undefined);
});

Deno.test("a level's counters run from its start to its end; gauges over it", () => {
  const at = (generatedTokens: number, running: number) => ({ generatedTokens, running });
  assert.deepEqual(
    summarizeLlmServer(at(100, 0), [at(150, 4), at(300, 2)], at(400, 0)),
    { scrapes: 4, generatedTokens: 300, running: { avg: 3, max: 4 } },
  );
  // A counter that went backwards (the server restarted) gives no figure; no gauge without
  // a scrape while the level ran.
  assert.deepEqual(summarizeLlmServer(at(100, 1), [], at(50, 1)), { scrapes: 2 });
});
