import assert from "node:assert/strict";
import { config, usageErrors, warnings } from "./testdata/usage_errors.ts";

Deno.test("gRPC: default port 8001, streaming implies async, compression and TLS files", () => {
  const c = config(
    "-m",
    "x",
    "-i",
    "grpc",
    "--streaming",
    "--grpc-compression-algorithm",
    "gzip",
    "--ssl-grpc-use-ssl",
    "--ssl-grpc-root-certifications-file",
    "ca.pem",
  );
  assert.equal(c.url, "localhost:8001");
  assert.equal(c.streaming, true);
  assert.equal(c.async, true);
  assert.equal(c.grpcCompression, "gzip");
  assert.deepEqual(c.grpcSsl, {
    rootCertificatesFile: "ca.pem",
    privateKeyFile: undefined,
    certificateChainFile: undefined,
  });
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--streaming",
        "--grpc-compression-algorithm",
        "gzip",
        "--ssl-grpc-private-key-file",
        "k.pem",
      )
    ),
    [
      "Option --streaming needs -i grpc (HTTP has no streams)",
      "Option --grpc-compression-algorithm needs -i grpc",
    ],
  );
  // perf_analyzer ignores TLS options of the other protocol; so does a run, saying so.
  assert.deepEqual(warnings("-m", "x", "--ssl-grpc-private-key-file", "k.pem"), [
    "Options --ssl-grpc-* apply to -i grpc only (for HTTPS use --ssl-https-*): ignored, as " +
    "perf_analyzer ignores it",
  ]);
  assert.deepEqual(warnings("-m", "x", "-i", "grpc", "--ssl-grpc-root-certifications-file", "c"), [
    "Options --ssl-grpc-root-certifications-file apply with --ssl-grpc-use-ssl only: ignored, " +
    "as perf_analyzer ignores it",
  ]);
  assert.deepEqual(
    usageErrors(() =>
      config("-m", "x", "-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-private-key-file", "k")
    ),
    [
      "Options --ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file go together " +
      "(the client certificate and its key)",
    ],
  );
});

Deno.test("--ssl-https-*: an https URL, verify-host 0 turns hostname checks off, verify-peer 0 chain checks", () => {
  const c = config(
    "-m",
    "x",
    "-u",
    "https://localhost:8443",
    "--ssl-https-verify-host",
    "0",
    "--ssl-https-ca-certificates-file",
    "ca.pem",
    "--ssl-https-client-certificate-file",
    "c.der",
    "--ssl-https-client-certificate-type",
    "DER",
    "--ssl-https-private-key-file",
    "k.pem",
  );
  assert.equal(c.httpsSsl.verifyHost, false);
  assert.equal(c.httpsSsl.verifyPeer, true);
  assert.equal(c.httpsSsl.clientCertificateType, "DER");
  assert.equal(c.httpsSsl.privateKeyType, "PEM");
  const unverified = config("-m", "x", "-u", "https://h:1", "--ssl-https-verify-peer", "0");
  assert.equal(unverified.httpsSsl.verifyPeer, false);
  assert.equal(unverified.httpsSsl.verifyHost, true);
  const errors = usageErrors(() =>
    config("-m", "x", "-u", "https://h:1", "--ssl-https-verify-peer", "2")
  );
  assert.match(errors[0], /Invalid value "2" for --ssl-https-verify-peer: expected 0 or 1/);
  assert.match(
    warnings("-m", "x", "--ssl-https-ca-certificates-file", "ca.pem")[0],
    /apply to -i http with an https:\/\/ URL in -u only: ignored/,
  );
});

Deno.test("--request-parameter: typed values, reserved names refused", () => {
  const c = config(
    "-m",
    "x",
    "--request-parameter",
    "max_tokens:256:int",
    "--request-parameter",
    "seed:18446744073709551615:uint",
    "--request-parameter",
    "temperature:1:double",
    "--request-parameter",
    "stream:true:bool",
    "--request-parameter",
    "stop:a:b:string",
  );
  assert.deepEqual(c.requestParameters, [
    { name: "max_tokens", value: 256 },
    { name: "seed", value: { type: "uint64", value: 18446744073709551615n } },
    { name: "temperature", value: { type: "double", value: 1 } },
    { name: "stream", value: true },
    { name: "stop", value: "a:b" },
  ]);
  const errors = usageErrors(() =>
    config(
      "-m",
      "x",
      "--request-parameter",
      "sequence_id:1:int",
      "--request-parameter",
      "triton_enable_empty_final_response:true:bool",
      "--request-parameter",
      "n:-1:uint",
      "--request-parameter",
      "n:1:float",
      "--request-parameter",
      "n",
    )
  );
  assert.equal(errors.length, 5);
  assert.match(errors[0], /"sequence_id" is a reserved parameter/);
  assert.match(errors[1], /"triton_enable_empty_final_response" is a reserved parameter/);
  assert.match(errors[2], /expected an unsigned 64-bit integer/);
  assert.match(errors[3], /unknown TYPE "float"/);
  assert.match(errors[4], /expected NAME:VALUE:TYPE/);
});

Deno.test("service kinds: defaults, the protocol each needs and the options that go with it", () => {
  const tf = config("-m", "resnet50", "--service-kind", "tfserving");
  assert.equal(tf.protocol, "grpc");
  assert.equal(tf.url, "localhost:8500");
  assert.equal(tf.modelSignatureName, "serving_default");
  const torch = config("-m", "r", "--service-kind", "torchserve", "--input-data", "data.json");
  assert.equal(torch.serviceKind, "torchserve");
  const llm = config(
    "-m",
    "llm",
    "--service-kind",
    "openai",
    "--endpoint",
    "/v1/chat/completions",
    "--streaming",
    "--output-tokens-mean",
    "16",
  );
  assert.equal(llm.endpoint, "v1/chat/completions");
  assert.equal(llm.streaming, true);
  assert.deepEqual(llm.syntheticPrompts, {
    inputTokensMean: 550,
    inputTokensStddev: 0,
    outputTokens: { mean: 16, stddev: 0, deterministic: false },
    count: 100,
    streaming: true,
    seed: 0,
  });
  assert.equal(llm.tokenizer, "llama");
  assert.equal(llm.applyChatTemplate, false);
  assert.deepEqual(llm.goodput, []);
  // A model directory (its files are read when the run starts) and its chat template.
  const chat = ["-m", "llm", "--service-kind", "openai", "--endpoint", "v1/chat/completions"];
  const dir = new URL("../../fixtures/tokenizers/unigram", import.meta.url).pathname;
  const templated = config(...chat, "--tokenizer", dir, "--apply-chat-template");
  assert.deepEqual([templated.tokenizer, templated.applyChatTemplate], [dir, true]);
  assert.deepEqual(usageErrors(() => config(...chat, "--apply-chat-template")), [
    "--apply-chat-template needs --tokenizer DIR, a model directory with its chat template (the " +
    'built-in tokenizer "llama" has none)',
  ]);
  const genai = config(
    ...["-m", "llm", "--service-kind", "openai", "--endpoint", "v2/models/llm/generate_stream"],
    ...["--output-tokens-mean", "100", "--output-tokens-stddev", "10"],
    ...["--output-tokens-mean-deterministic", "--random-seed", "7", "--tokenizer", "cl100k_base"],
    ...["--input-file", "prompts.jsonl", "--goodput", "time_to_first_token:100"],
    ...["inter_token_latency:10", "request_latency:2000"],
  );
  assert.deepEqual(genai.syntheticPrompts.outputTokens, {
    mean: 100,
    stddev: 10,
    deterministic: true,
  });
  assert.equal(genai.syntheticPrompts.seed, 7);
  assert.equal(genai.syntheticPrompts.inputFile, "prompts.jsonl");
  assert.equal(genai.tokenizer, "cl100k_base");
  assert.deepEqual(genai.goodput, [
    { metric: "time_to_first_token", value: 100 },
    { metric: "inter_token_latency", value: 10 },
    { metric: "request_latency", value: 2000 },
  ]);
  const openai = ["-m", "x", "--service-kind", "openai", "--endpoint", "v1/completions"];
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...openai,
        ...["--goodput", "ttft:1", "--output-tokens-stddev", "3", "--tokenizer", "gpt2"],
        "--apply-chat-template",
      )
    ),
    [
      "Option --output-tokens-stddev needs --output-tokens-mean",
      'Invalid value "ttft:1" for --goodput: expected NAME:VALUE with NAME one of ' +
      "time_to_first_token, time_to_second_token, inter_token_latency, request_latency, " +
      "output_token_throughput_per_user",
      'Invalid value "gpt2" for --tokenizer: expected one of llama, cl100k_base, none or a ' +
      "model directory (tokenizer.json, tokenizer_config.json)",
      "--apply-chat-template needs a chat endpoint (--endpoint v1/chat/completions, " +
      "--endpoint-type chat or messages)",
    ],
  );
  assert.deepEqual(
    usageErrors(() => config(...openai, "--input-file", "p.jsonl", "--input-data", "d.json")),
    ["Options --input-file and --input-data exclude each other: give one"],
  );
  assert.deepEqual(
    usageErrors(() => config("-m", "x", "--service-kind", "tfserving", "-i", "http")),
    ["--service-kind tfserving needs -i grpc (TF Serving's Predict API is gRPC)"],
  );
  assert.deepEqual(usageErrors(() => config("-m", "x", "--service-kind", "torchserve")), [
    "--service-kind torchserve needs --input-data FILE.json naming the file to send, e.g. " +
    '{"data": [{"TORCHSERVE_INPUT": ["kitten_small.jpg"]}]}',
  ]);
  assert.deepEqual(
    usageErrors(() =>
      config("-m", "x", "--service-kind", "openai", "-i", "grpc", "--input-data", "zero")
    ),
    [
      "--service-kind openai needs -i http",
      "--service-kind openai needs --endpoint-type or --endpoint (v1/chat/completions, " +
      "v1/completions, v1/embeddings, v1/ranking, rerank, v1/responses, v1/messages, generate, " +
      "generate_stream, v2/models/MODEL/generate[_stream])",
      "--service-kind openai takes payload files in --input-data " +
      '({"data": [{"payload": [{...}]}]}), or none for synthetic prompts ' +
      "(--synthetic-input-tokens-mean); not generated tensors",
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        "-m",
        "x",
        "--endpoint",
        "v1/embeddings",
        "--model-signature-name",
        "s",
        "--num-prompts",
        "2",
      )
    ),
    ["Options --num-prompts apply to --service-kind openai only"],
  );
  assert.deepEqual(
    warnings("-m", "x", "--endpoint", "v1/embeddings", "--model-signature-name", "s"),
    [
      "Option --endpoint applies to --service-kind openai only: ignored, as perf_analyzer ignores it",
      "Option --model-signature-name applies to --service-kind tfserving only: ignored, as " +
      "perf_analyzer ignores it",
    ],
  );
  assert.deepEqual(usageErrors(() => config("-m", "x", "--service-kind", "triton_c_api")), [
    "--service-kind triton_c_api needs --model-repository DIR (the model repository the " +
    "in-process server loads)",
  ]);
  const capi = ["--service-kind", "triton_c_api", "--triton-server-directory", "/opt/tritonserver"];
  const c = config("-m", "x", ...capi, "--model-repository", "models", "--streaming");
  assert.equal(c.serviceKind, "triton_c_api");
  assert.equal(c.tritonServerDirectory, "/opt/tritonserver");
  assert.equal(c.modelRepository, "models");
  assert.match(
    warnings("-m", "x", ...capi, "--model-repository", "m", "-i", "grpc")[0],
    /^Options --protocol do not apply to --service-kind triton_c_api .*: ignored/,
  );
  assert.match(
    usageErrors(() => config("-m", "x", ...capi, "--model-repository", "m", "--workers", "2"))[0],
    /^Option --workers 2 can not be used with --service-kind triton_c_api: .* one per process/,
  );
  assert.deepEqual(warnings("-m", "x", "--model-repository", "m"), [
    "Options --model-repository apply to --service-kind triton_c_api only: ignored, as " +
    "perf_analyzer ignores it",
  ]);
});

Deno.test("shared memory: system for Triton over HTTP and gRPC; cuda needs CUDA", () => {
  const c = config("-m", "x", "-i", "grpc", "--shared-memory", "system");
  assert.equal(c.sharedMemory, "system");
  assert.equal(c.outputSharedMemorySize, 102400);
  assert.deepEqual(usageErrors(() => config("-m", "x", "--shared-memory", "cuda")), [
    'Value "cuda" of --shared-memory needs CUDA (an NVIDIA GPU and its driver, with the server ' +
    "on the same machine), which inferperf does not use: use --shared-memory system",
  ]);
  assert.deepEqual(
    usageErrors(() =>
      config("-m", "x", "--service-kind", "tfserving", "--shared-memory", "system")
    ),
    [
      "--shared-memory system needs --service-kind triton or triton_c_api (shared memory is a " +
      "Triton extension)",
    ],
  );
  assert.deepEqual(
    usageErrors(() => config("-m", "x", "--output-shared-memory-size", "-1")),
    ['Invalid value "-1" for --output-shared-memory-size: expected an integer >= 0'],
  );
});
