import assert from "node:assert/strict";
import { type RunningServer, startServer } from "./server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function withServer(fn: (server: RunningServer, url: string) => Promise<void>) {
  const server = await startServer();
  try {
    await fn(server, `http://${server.addr}`);
  } finally {
    await server.close();
  }
}

async function getJson(url: string): Promise<[number, unknown]> {
  const response = await fetch(url);
  return [response.status, await response.json()];
}

async function postJson(url: string, body: unknown): Promise<[number, unknown]> {
  const response = await fetch(url, { method: "POST", body: JSON.stringify(body) });
  return [response.status, await response.json()];
}

function int32(values: number[]): Uint8Array {
  return new Uint8Array(new Int32Array(values).buffer);
}

const RANGE = Array.from({ length: 16 }, (_, i) => i);
const ONES = new Array(16).fill(1);

/** A request in the binary tensor extension: JSON header, then the tensors' bytes. */
async function postBinary(
  url: string,
  { header, tensors }: { header: unknown; tensors: Uint8Array[] },
): Promise<Response> {
  const head = encoder.encode(JSON.stringify(header));
  const body = new Uint8Array(head.byteLength + tensors.reduce((n, t) => n + t.byteLength, 0));
  body.set(head);
  let offset = head.byteLength;
  for (const t of tensors) {
    body.set(t, offset);
    offset += t.byteLength;
  }
  return await fetch(url, {
    method: "POST",
    headers: { "Inference-Header-Content-Length": String(head.byteLength) },
    body,
  });
}

Deno.test("server metadata, health and readiness", async () => {
  await withServer(async (_, url) => {
    const [status, meta] = await getJson(`${url}/v2`);
    assert.equal(status, 200);
    const { name, extensions } = meta as { name: string; extensions: string[] };
    assert.equal(name, "inferperf-reference");
    for (const e of ["binary_tensor_data", "statistics", "model_configuration"]) {
      assert.ok(extensions.includes(e), e);
    }
    for (const path of ["/v2/health/live", "/v2/health/ready", "/v2/models/simple/ready"]) {
      const response = await fetch(url + path);
      await response.body?.cancel();
      assert.equal(response.status, 200, path);
    }
    const versioned = await fetch(`${url}/v2/models/simple/versions/1/ready`);
    await versioned.body?.cancel();
    assert.equal(versioned.status, 200);
    const [missing, error] = await getJson(`${url}/v2/models/nope/ready`);
    assert.equal(missing, 404);
    assert.deepEqual(error, { error: "Request for unknown model: 'nope' is not found" });
  });
});

Deno.test("model metadata and configuration", async () => {
  await withServer(async (_, url) => {
    const [, simple] = await getJson(`${url}/v2/models/simple`);
    assert.deepEqual(simple, {
      name: "simple",
      versions: ["1"],
      platform: "simulated",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "OUTPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
    });
    const [, slow] = await getJson(`${url}/v2/models/slow/versions/1`);
    assert.deepEqual((slow as { inputs: unknown }).inputs, [
      { name: "INPUT0", datatype: "FP32", shape: [16] },
    ]);
    const [, config] = await getJson(`${url}/v2/models/batched/config`);
    const c = config as Record<string, unknown>;
    assert.equal(c.name, "batched");
    assert.equal(c.max_batch_size, 8);
    assert.deepEqual(c.model_transaction_policy, { decoupled: false });
    assert.deepEqual(c.dynamic_batching, {
      preferred_batch_size: [4, 8],
      max_queue_delay_microseconds: 2000,
      preserve_ordering: false,
    });
    assert.deepEqual((c.input as Array<Record<string, unknown>>)[0].data_type, "TYPE_FP32");
    assert.deepEqual((c.instance_group as Array<Record<string, unknown>>)[0].count, 1);
    const [status, error] = await getJson(`${url}/v2/models/simple/versions/2`);
    assert.equal(status, 404);
    assert.deepEqual(error, {
      error: "Request for unknown model: 'simple' version 2 is not found",
    });
  });
});

Deno.test("JSON inference computes sums and differences", async () => {
  await withServer(async (_, url) => {
    const [status, body] = await postJson(`${url}/v2/models/simple/infer`, {
      id: "r1",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: RANGE },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: [ONES] },
      ],
    });
    assert.equal(status, 200);
    assert.deepEqual(body, {
      model_name: "simple",
      model_version: "1",
      id: "r1",
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: [1, 16], data: RANGE.map((v) => v + 1) },
        { name: "OUTPUT1", datatype: "INT32", shape: [1, 16], data: RANGE.map((v) => v - 1) },
      ],
    });
  });
});

Deno.test("binary inference, with per-output and request-wide binary flags", async () => {
  await withServer(async (_, url) => {
    const inputs = [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
    ];
    const response = await postBinary(`${url}/v2/models/simple/infer`, {
      header: {
        inputs,
        outputs: [{ name: "OUTPUT1", parameters: { binary_data: true } }, { name: "OUTPUT0" }],
      },
      tensors: [int32(RANGE), int32(ONES)],
    });
    assert.equal(response.status, 200);
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    const bytes = new Uint8Array(await response.arrayBuffer());
    const header = JSON.parse(decoder.decode(bytes.subarray(0, headerLength)));
    assert.deepEqual(header.outputs, [
      {
        name: "OUTPUT1",
        datatype: "INT32",
        shape: [1, 16],
        parameters: { binary_data_size: 64 },
      },
      { name: "OUTPUT0", datatype: "INT32", shape: [1, 16], data: RANGE.map((v) => v + 1) },
    ]);
    const diff = new Int32Array(bytes.slice(headerLength).buffer);
    assert.deepEqual([...diff], RANGE.map((v) => v - 1));

    const all = await postBinary(`${url}/v2/models/simple/infer`, {
      header: { inputs, parameters: { binary_data_output: true } },
      tensors: [int32(RANGE), int32(RANGE)],
    });
    const allBytes = new Uint8Array(await all.arrayBuffer());
    const allLength = Number(all.headers.get("inference-header-content-length"));
    assert.equal(allBytes.byteLength, allLength + 128);
    const outputs = new Int32Array(allBytes.slice(allLength).buffer);
    assert.deepEqual([...outputs], [...RANGE.map((v) => 2 * v), ...new Array(16).fill(0)]);
  });
});

Deno.test("invalid requests get Triton's error messages", async () => {
  await withServer(async (_, url) => {
    const infer = `${url}/v2/models/simple/infer`;
    const int = (name: string, shape: number[]) => ({
      name,
      datatype: "INT32",
      shape,
      data: RANGE,
    });
    const zeros = new Array(144).fill(0);
    const cases: Array<[string, unknown, number, string]> = [
      [
        `${url}/v2/models/nope/infer`,
        { inputs: [] },
        404,
        "Request for unknown model: 'nope' is not found",
      ],
      [
        infer,
        { inputs: [int("INPUT0", [1, 16])] },
        400,
        "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got " +
        "input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all " +
        "required input(s).",
      ],
      [
        infer,
        { inputs: [int("INPUT0", [1, 16]), { ...int("INPUT1", [1, 16]), datatype: "FP32" }] },
        400,
        "[request id: <id_unknown>] inference input 'INPUT1' data-type is 'FP32', but model " +
        "'simple' expects 'INT32'",
      ],
      [
        infer,
        { inputs: [int("INPUT0", [1, 16]), int("INPUTX", [1, 16])] },
        400,
        "unexpected inference input 'INPUTX' for model 'simple'",
      ],
      [
        infer,
        {
          inputs: [
            { ...int("INPUT0", [9, 16]), data: zeros },
            { ...int("INPUT1", [9, 16]), data: zeros },
          ],
        },
        400,
        "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'",
      ],
      [
        infer,
        { inputs: [int("INPUT0", [1, 16]), { ...int("INPUT1", [1, 16]), data: [1, 2] }] },
        500,
        "Failed to parse 'data' field: shape does not match true shape",
      ],
    ];
    for (const [target, body, status, message] of cases) {
      assert.deepEqual(await postJson(target, body), [status, { error: message }], message);
    }
    const short = await postBinary(infer, {
      header: {
        inputs: [
          {
            name: "INPUT0",
            datatype: "INT32",
            shape: [1, 16],
            parameters: { binary_data_size: 60 },
          },
          {
            name: "INPUT1",
            datatype: "INT32",
            shape: [1, 16],
            parameters: { binary_data_size: 64 },
          },
        ],
      },
      tensors: [int32(RANGE).subarray(0, 60), int32(ONES)],
    });
    assert.equal(short.status, 400);
    assert.deepEqual(await short.json(), {
      error: "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model " +
        "'simple'. Expected 64, got 60",
    });
    const malformed = await fetch(infer, { method: "POST", body: "{" });
    assert.equal(malformed.status, 500);
    assert.match(
      (await malformed.json()).error,
      /^failed to parse the request JSON buffer: /,
    );
    const [status] = await getJson(`${url}/v2/nothing`);
    assert.equal(status, 404);
  });
});

Deno.test("statistics count requests, executions and failures", async () => {
  await withServer(async (_, url) => {
    const body = {
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [2, 16], data: [...RANGE, ...RANGE] },
        { name: "INPUT1", datatype: "INT32", shape: [2, 16], data: [...ONES, ...ONES] },
      ],
    };
    for (let i = 0; i < 5; i++) await postJson(`${url}/v2/models/simple/infer`, body);
    await postJson(`${url}/v2/models/simple/infer`, { inputs: [] });
    await postJson(`${url}/v2/models/slow/infer`, {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [16], data: RANGE }],
    });
    const [, one] = await getJson(`${url}/v2/models/simple/versions/1/stats`);
    const [stats] = (one as { model_stats: Array<Record<string, unknown>> }).model_stats;
    assert.equal(stats.name, "simple");
    assert.equal(stats.version, "1");
    assert.equal(stats.inference_count, 10);
    assert.equal(stats.execution_count, 5);
    const inference = stats.inference_stats as Record<string, { count: number; ns: number }>;
    assert.equal(inference.success.count, 5);
    assert.equal(inference.fail.count, 1);
    assert.equal(inference.queue.count, 5);
    assert.equal(inference.compute_infer.count, 5);
    assert.equal(inference.cache_hit.count, 0);
    assert.ok(inference.success.ns >= inference.queue.ns + inference.compute_infer.ns);
    assert.deepEqual(
      (stats.batch_stats as Array<{ batch_size: number; compute_infer: { count: number } }>)
        .map((b) => [b.batch_size, b.compute_infer.count]),
      [[2, 5]],
    );
    const [, all] = await getJson(`${url}/v2/models/stats`);
    const models = (all as { model_stats: Array<Record<string, unknown>> }).model_stats;
    assert.deepEqual(models.map((m) => m.name).slice(0, 4), [
      "simple",
      "slow",
      "identity_fp32",
      "batched",
    ]);
    const slow = models[1].inference_stats as Record<string, { count: number; ns: number }>;
    assert.equal(slow.success.count, 1);
    assert.ok(slow.compute_infer.ns >= 10e6, `compute_infer ${slow.compute_infer.ns} ns`);
  });
});

Deno.test("metrics report model counters and two simulated GPUs", async () => {
  await withServer(async (server, url) => {
    await postJson(`${url}/v2/models/slow/infer`, {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [16], data: RANGE }],
    });
    const response = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/plain/);
    const text = await response.text();
    assert.match(text, /^# HELP nv_inference_request_success /m);
    assert.match(text, /^# TYPE nv_inference_request_success counter$/m);
    assert.match(text, /^nv_inference_request_success\{model="slow",version="1"\} 1$/m);
    assert.match(text, /^nv_inference_count\{model="slow",version="1"\} 1$/m);
    assert.match(text, /^nv_inference_exec_count\{model="slow",version="1"\} 1$/m);
    assert.match(text, /^nv_inference_request_failure\{model="simple",version="1"\} 0$/m);
    const infer = text.match(/^nv_inference_compute_infer_duration_us\{model="slow".*\} (\d+)$/m);
    assert.ok(Number(infer?.[1]) >= 10000, infer?.[0]);
    assert.match(text, /^nv_inference_queue_duration_us\{model="slow",version="1"\} \d+$/m);
    const gpus = [
      ...text.matchAll(/^nv_gpu_utilization\{gpu_uuid="(GPU-[0-9a-f-]+)"\} ([\d.]+)$/gm),
    ];
    assert.equal(gpus.length, 2);
    for (const [, , value] of gpus) assert.ok(Number(value) >= 0 && Number(value) <= 1);
    for (
      const name of ["nv_gpu_power_usage", "nv_gpu_memory_used_bytes", "nv_gpu_memory_total_bytes"]
    ) {
      assert.equal(text.match(new RegExp(`^${name}\\{gpu_uuid="GPU-`, "gm"))?.length, 2, name);
    }
    const notFound = await fetch(`http://127.0.0.1:${server.metricsPort}/other`);
    await notFound.body?.cancel();
    assert.equal(notFound.status, 404);
  });
});
