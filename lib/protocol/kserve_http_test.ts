import assert from "node:assert/strict";
import { tensorFromJson, tensorToJson } from "../input/codec.ts";
import type { Datatype } from "../types/datatype.ts";
import { ConnectionError, InferError, ProtocolError } from "./errors.ts";
import {
  decodeInferResponse,
  KServeHttpClient,
  type KServeHttpOptions,
  modelInfoFromJson,
  parseKServeUrl,
  serverError,
} from "./kserve_http.ts";
import type { InferRequest, Tensor } from "../types/tensor.ts";
import type { PreparedRequest } from "./types.ts";
import type { RequestTiming } from "../types/timing.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** JSON.parse keeping big integers exact, as a Triton server does. */
const parseExact = (text: string): unknown =>
  (JSON.parse as (
    t: string,
    r: (k: string, v: unknown, c?: { source?: string }) => unknown,
  ) => unknown)(
    text,
    (_k, v, c) =>
      typeof v === "number" && !Number.isSafeInteger(v) && /^\d+$/.test(c?.source ?? "")
        ? BigInt(c!.source!)
        : v,
  );

function json(value: unknown, status = 200): Response {
  const text = JSON.stringify(value, (_k, v) => typeof v === "bigint" ? rawJson(v.toString()) : v);
  return new Response(text, { status, headers: { "content-type": "application/json" } });
}

function int32(...values: number[]): Uint8Array {
  return new Uint8Array(new Int32Array(values).buffer);
}

const METADATA: Record<string, unknown> = {
  simple: {
    name: "simple",
    versions: ["1", "2"],
    platform: "onnxruntime_onnx",
    inputs: [{ name: "INPUT0", datatype: "INT32", shape: [-1, 4] }],
    outputs: [{ name: "OUTPUT0", datatype: "INT32", shape: [-1, "4"] }],
  },
  plain: {
    name: "plain",
    versions: ["1"],
    platform: "custom",
    inputs: [{ name: "IN", datatype: "FP32", shape: [1, 3] }],
    outputs: [{ name: "OUT", datatype: "BYTES", shape: [-1] }],
  },
  ens: {
    name: "ens",
    platform: "ensemble",
    inputs: [{ name: "IN", datatype: "FP16", shape: [-1, 2] }],
    outputs: [],
  },
  odd: {
    name: "odd",
    inputs: [{ name: "IN", datatype: "FLOAT", shape: [1] }],
  },
};

const CONFIG: Record<string, unknown> = {
  simple: {
    name: "simple",
    max_batch_size: 8,
    input: [{ name: "INPUT0", data_type: "TYPE_INT32", dims: ["4"] }],
    sequence_batching: { max_sequence_idle_microseconds: 1000 },
    response_cache: { enable: true },
  },
  ens: {
    max_batch_size: 4,
    model_transaction_policy: { decoupled: true },
    ensemble_scheduling: {
      step: [{ model_name: "pre" }, { model_name: "infer" }, { model_name: "pre" }],
    },
  },
};

const STATS = {
  model_stats: [{
    name: "simple",
    version: "1",
    last_inference: 1700000000000,
    inference_count: 120,
    execution_count: "60",
    inference_stats: {
      success: { count: 120, ns: "9007199254740993" },
      fail: { count: 1, ns: 5 },
      queue: { count: 120, ns: 1000 },
      compute_input: { count: "120", ns: 2000 },
      compute_infer: { count: 120, ns: 3000 },
      compute_output: { count: 120, ns: 4000 },
      cache_hit: { count: 0, ns: 0 },
    },
    batch_stats: [],
  }],
};

interface WireInput {
  name: string;
  datatype: Datatype;
  shape: number[];
  data?: unknown[];
  parameters?: { binary_data_size?: number };
}

interface Seen {
  path: string;
  headers: Headers;
  header: Record<string, unknown>;
}

/** A fake KServe/Triton server: models echo their inputs as outputs named OUTPUT*. */
function fakeServer() {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const route = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(?:\/(config|stats|infer))?$/
      .exec(path);
    if (path === "/v2") {
      return json({
        name: "fake",
        version: "1.2",
        extensions: ["binary_tensor_data", "statistics"],
      });
    }
    if (route === null) return json({ error: `no route ${path}` }, 404);
    const [, model, , action] = route;
    if (!(model in METADATA)) {
      return json({ error: `Request for unknown model: '${model}' is not found` }, 400);
    }
    if (action === undefined) return json(METADATA[model]);
    if (action === "config") {
      return model in CONFIG ? json(CONFIG[model]) : new Response("not found", { status: 404 });
    }
    if (action === "stats") return json(STATS);
    const body = new Uint8Array(await req.arrayBuffer());
    const headerLength = Number(req.headers.get("inference-header-content-length") ?? body.length);
    const header = parseExact(decoder.decode(body.subarray(0, headerLength))) as {
      inputs: WireInput[];
      outputs?: { name: string; parameters?: { binary_data?: boolean } }[];
      parameters?: Record<string, unknown>;
    };
    seen.push({ path, headers: req.headers, header });
    if (header.parameters?.fail === true) return json({ error: "asked to fail" }, 500);
    let offset = headerLength;
    const tensors = header.inputs.map((input) => {
      const datatype = input.datatype;
      let data: Uint8Array;
      if (input.parameters?.binary_data_size !== undefined) {
        const size = input.parameters.binary_data_size;
        data = body.slice(offset, offset + size);
        offset += size;
      } else {
        data = tensorFromJson(datatype, input.data ?? []);
      }
      return { name: input.name.replace("INPUT", "OUTPUT"), datatype, shape: input.shape, data };
    });
    const requested = header.outputs as
      | { name: string; parameters?: { binary_data?: boolean } }[]
      | undefined;
    const binaryAll = header.parameters?.binary_data_output === true;
    const outputs = tensors
      .filter((t) => requested === undefined || requested.some((r) => r.name === t.name))
      .map((t) => ({
        tensor: t,
        binary: requested?.find((r) => r.name === t.name)?.parameters?.binary_data ?? binaryAll,
      }));
    const responseHeader = {
      model_name: model,
      outputs: outputs.map(({ tensor, binary }) => ({
        name: tensor.name,
        datatype: tensor.datatype,
        shape: tensor.shape,
        ...(binary
          ? { parameters: { binary_data_size: tensor.data.length } }
          : { data: tensorToJson(tensor.datatype, tensor.data) }),
      })),
    };
    const jsonText = encoder.encode(
      JSON.stringify(responseHeader, (_k, v) => typeof v === "bigint" ? rawJson(String(v)) : v),
    );
    const binaries = outputs.filter((o) => o.binary).map((o) => o.tensor.data);
    if (binaries.length === 0) return new Response(jsonText);
    const out = new Uint8Array(binaries.reduce((n, b) => n + b.length, jsonText.length));
    out.set(jsonText);
    let at = jsonText.length;
    for (const b of binaries) {
      out.set(b, at);
      at += b.length;
    }
    return new Response(out, {
      headers: { "inference-header-content-length": String(jsonText.length) },
    });
  });
  return {
    seen,
    url: `http://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    close: () => server.shutdown(),
  };
}

function client(url: string, options: Partial<KServeHttpOptions> = {}): KServeHttpClient {
  return new KServeHttpClient({ url, inputFormat: "binary", outputFormat: "binary", ...options });
}

/** Splits prepared request bytes into request line, header map and body. */
function parseRequest(prepared: PreparedRequest) {
  const bytes = (prepared as unknown as { bytes: Uint8Array }).bytes;
  assert.equal(bytes.byteLength, prepared.byteLength);
  const text = new TextDecoder("latin1").decode(bytes);
  const headEnd = text.indexOf("\r\n\r\n");
  const [line, ...fields] = text.slice(0, headEnd).split("\r\n");
  const headers = new Map(fields.map((f) => {
    const colon = f.indexOf(":");
    return [f.slice(0, colon).toLowerCase(), f.slice(colon + 1).trim()];
  }));
  const body = bytes.subarray(headEnd + 4);
  assert.equal(Number(headers.get("content-length")), body.length);
  return { line, headers, body };
}

function newTiming(): RequestTiming {
  return { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
}

const INPUT0: Tensor = {
  name: "INPUT0",
  datatype: "INT32",
  shape: [1, 4],
  data: int32(1, 2, 3, 4),
};
const BYTES_INPUT: Tensor = {
  name: "INPUT1",
  datatype: "BYTES",
  shape: [1, 2],
  data: tensorFromJson("BYTES", ["ab", "ü"]),
};

Deno.test("server URLs", () => {
  assert.deepEqual(parseKServeUrl("localhost:8001"), {
    endpoint: { hostname: "localhost", port: 8001 },
    basePath: "",
  });
  assert.deepEqual(parseKServeUrl("localhost").endpoint.port, 8000);
  assert.deepEqual(parseKServeUrl("HTTP://10.0.0.1:9000/"), {
    endpoint: { hostname: "10.0.0.1", port: 9000 },
    basePath: "",
  });
  assert.deepEqual(parseKServeUrl("https://example.com/prefix/"), {
    endpoint: { hostname: "example.com", port: 443, tls: {} },
    basePath: "/prefix",
  });
  assert.deepEqual(parseKServeUrl("[::1]:8000").endpoint, { hostname: "[::1]", port: 8000 });
  for (const bad of ["", "grpc://host:1", "host:0", "host:99999", "host:abc", ":8000"]) {
    assert.throws(() => parseKServeUrl(bad), RangeError, bad);
  }
});

Deno.test("prepare: binary tensor extension", () => {
  const c = client("127.0.0.1:8000", { headers: { "X-Key": "v", "content-type": "custom/type" } });
  const request: InferRequest = {
    inputs: [INPUT0, BYTES_INPUT],
    outputs: [],
    parameters: { sequence_id: 9007199254740993n, sequence_start: true, tag: "x" },
  };
  const { line, headers, body } = parseRequest(
    c.prepare(request, { model: "simple", version: "" }),
  );
  assert.equal(line, "POST /v2/models/simple/infer HTTP/1.1");
  assert.equal(headers.get("host"), "127.0.0.1:8000");
  assert.equal(headers.get("x-key"), "v");
  assert.equal(headers.get("content-type"), "custom/type");
  const jsonLength = Number(headers.get("inference-header-content-length"));
  const jsonText = decoder.decode(body.subarray(0, jsonLength));
  assert.match(jsonText, /"sequence_id":9007199254740993[,}]/);
  assert.deepEqual(JSON.parse(jsonText), {
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 4], parameters: { binary_data_size: 16 } },
      {
        name: "INPUT1",
        datatype: "BYTES",
        shape: [1, 2],
        parameters: { binary_data_size: BYTES_INPUT.data.length },
      },
    ],
    parameters: {
      sequence_id: 9007199254740993,
      sequence_start: true,
      tag: "x",
      binary_data_output: true,
    },
  });
  assert.deepEqual(body.subarray(jsonLength, jsonLength + 16), INPUT0.data);
  assert.deepEqual(body.subarray(jsonLength + 16), BYTES_INPUT.data);

  const named = parseRequest(
    c.prepare({ inputs: [INPUT0], outputs: ["OUTPUT0"] }, { model: "a/b", version: "3" }),
  );
  assert.equal(named.line, "POST /v2/models/a%2Fb/versions/3/infer HTTP/1.1");
  const header = JSON.parse(
    decoder.decode(
      named.body.subarray(0, Number(named.headers.get("inference-header-content-length"))),
    ),
  );
  assert.deepEqual(header.outputs, [{ name: "OUTPUT0", parameters: { binary_data: true } }]);
  assert.equal(header.parameters, undefined);
});

Deno.test("prepare: JSON inputs and outputs", () => {
  const c = client("127.0.0.1:8000", { inputFormat: "json", outputFormat: "json" });
  const big: Tensor = {
    name: "BIG",
    datatype: "INT64",
    shape: [3],
    data: tensorFromJson("INT64", [-9007199254740993n, 1, "9223372036854775807"]),
  };
  const half: Tensor = {
    name: "H",
    datatype: "FP16",
    shape: [2],
    data: tensorFromJson("FP16", [0.5, -2]),
  };
  const { headers, body } = parseRequest(c.prepare(
    { inputs: [big, BYTES_INPUT, half], outputs: ["A", "B"] },
    { model: "m", version: "" },
  ));
  assert.equal(headers.get("content-type"), "application/json");
  assert.equal(headers.has("inference-header-content-length"), false);
  const text = decoder.decode(body);
  assert.match(text, /"data":\[-9007199254740993,1,9223372036854775807\]/);
  const parsed = JSON.parse(text);
  assert.deepEqual(parsed.inputs[1], {
    name: "INPUT1",
    datatype: "BYTES",
    shape: [1, 2],
    data: ["ab", "ü"],
  });
  assert.deepEqual(parsed.inputs[2].data, [0.5, -2]);
  assert.deepEqual(parsed.outputs, [
    { name: "A", parameters: { binary_data: false } },
    { name: "B", parameters: { binary_data: false } },
  ]);
  assert.equal(parsed.parameters, undefined);

  const all = parseRequest(c.prepare({ inputs: [], outputs: [] }, { model: "m", version: "" }));
  assert.deepEqual(JSON.parse(decoder.decode(all.body)), { inputs: [] });
});

Deno.test("server and model metadata", async () => {
  const server = fakeServer();
  const c = client(server.url, { headers: { Authorization: "Bearer t" } });
  try {
    assert.deepEqual(await c.serverInfo(), {
      name: "fake",
      version: "1.2",
      extensions: ["binary_tensor_data", "statistics"],
    });
    assert.deepEqual(await c.modelInfo("simple", ""), {
      name: "simple",
      version: "",
      platform: "onnxruntime_onnx",
      versions: ["1", "2"],
      inputs: [{ name: "INPUT0", datatype: "INT32", dims: [4] }],
      outputs: [{ name: "OUTPUT0", datatype: "INT32", dims: [4] }],
      maxBatchSize: 8,
      decoupled: false,
      sequence: true,
      composingModels: [],
      responseCache: true,
    });
    const plain = await c.modelInfo("plain", "1");
    assert.equal(plain.version, "1");
    assert.equal(plain.maxBatchSize, 0);
    assert.deepEqual(plain.inputs[0].dims, [1, 3]);
    assert.deepEqual(plain.outputs[0].dims, [-1]);
    assert.equal(plain.sequence || plain.decoupled || plain.responseCache, false);
    const ens = await c.modelInfo("ens", "");
    assert.equal(ens.decoupled, true);
    assert.deepEqual(ens.composingModels, ["pre", "infer"]);
    assert.deepEqual(ens.inputs, [{ name: "IN", datatype: "FP16", dims: [2] }]);
    assert.deepEqual(ens.versions, []);
    await assert.rejects(c.modelInfo("odd", ""), ProtocolError);
    await assert.rejects(c.modelInfo("nope", "2"), (e) => {
      assert.ok(e instanceof InferError);
      assert.equal(e.status, 400);
      assert.equal(
        e.message,
        "Server returned 400: Request for unknown model: 'nope' is not found",
      );
      return true;
    });
  } finally {
    await c.close();
    await server.close();
  }
});

Deno.test("model statistics accept numbers and strings", async () => {
  const server = fakeServer();
  const c = client(server.url);
  try {
    const [stats] = await c.modelStatistics("simple", "1");
    assert.deepEqual(stats, {
      name: "simple",
      version: "1",
      inferenceCount: 120,
      executionCount: 60,
      success: { count: 120, ns: 9007199254740992 },
      fail: { count: 1, ns: 5 },
      queue: { count: 120, ns: 1000 },
      computeInput: { count: 120, ns: 2000 },
      computeInfer: { count: 120, ns: 3000 },
      computeOutput: { count: 120, ns: 4000 },
      cacheHit: { count: 0, ns: 0 },
      cacheMiss: { count: 0, ns: 0 },
    });
    await assert.rejects(c.modelStatistics("nope", ""), InferError);
  } finally {
    await c.close();
    await server.close();
  }
});

Deno.test("an unreachable server is a ConnectionError naming the address", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const c = client(`127.0.0.1:${port}`);
  const expected = `Cannot connect to "127.0.0.1:${port}": connection refused`;
  await assert.rejects(c.serverInfo(), (e) => {
    assert.ok(e instanceof ConnectionError);
    assert.equal(e.message, expected);
    return true;
  });
  await assert.rejects(c.openSession(), { name: "ConnectionError", message: expected });
  await c.close();
});

Deno.test("sessions: binary and JSON round trips, timing and errors", async () => {
  const server = fakeServer();
  const binary = client(server.url, { headers: { "X-Trace": "1" } });
  const jsonClient = client(server.url, { inputFormat: "json", outputFormat: "json" });
  try {
    const session = await binary.openSession();
    const target = { model: "simple", version: "" };
    const prepared = binary.prepare({ inputs: [INPUT0, BYTES_INPUT], outputs: [] }, target);
    const timing = newTiming();
    for (let i = 0; i < 20; i++) {
      assert.equal(await session.infer(prepared, timing), undefined);
      assert.ok(timing.start > 0 && timing.start <= timing.sendEnd);
      assert.ok(timing.sendEnd <= timing.recvStart && timing.recvStart <= timing.end);
      assert.equal(timing.responses, 1);
    }
    assert.equal(server.seen.at(-1)?.headers.get("x-trace"), "1");
    const outputs = await session.infer(prepared, timing, { decodeOutputs: true });
    assert.deepEqual(outputs, [
      { ...INPUT0, name: "OUTPUT0" },
      { ...BYTES_INPUT, name: "OUTPUT1" },
    ]);

    const failing = binary.prepare({ inputs: [], outputs: [], parameters: { fail: true } }, target);
    await assert.rejects(session.infer(failing, timing), (e) => {
      assert.ok(e instanceof InferError);
      assert.equal(e.message, "Server returned 500: asked to fail");
      assert.equal(e.status, 500);
      return true;
    });
    assert.equal(timing.responses, 1);
    const missing = binary.prepare({ inputs: [INPUT0], outputs: [] }, { model: "x", version: "" });
    await assert.rejects(session.infer(missing, timing), {
      name: "InferError",
      message: "Server returned 400: Request for unknown model: 'x' is not found",
    });
    assert.equal(await session.infer(prepared, timing), undefined);

    const jsonSession = await jsonClient.openSession();
    const big: Tensor = {
      name: "INPUT2",
      datatype: "UINT64",
      shape: [2],
      data: tensorFromJson("UINT64", ["18446744073709551615", 7]),
    };
    const jsonOutputs = await jsonSession.infer(
      jsonClient.prepare({ inputs: [INPUT0, big], outputs: ["OUTPUT2"] }, target),
      timing,
      { decodeOutputs: true },
    );
    assert.deepEqual(jsonOutputs, [{ ...big, name: "OUTPUT2" }]);
    assert.deepEqual(server.seen.at(-1)?.header.outputs, [
      { name: "OUTPUT2", parameters: { binary_data: false } },
    ]);
    await assert.rejects(
      jsonSession.infer({ byteLength: 0 }, timing),
      /not prepared by a KServe HTTP client/,
    );
  } finally {
    await binary.close();
    await jsonClient.close();
    await server.close();
  }
});

Deno.test("close() closes the sessions a client opened", async () => {
  const server = fakeServer();
  const c = client(server.url);
  const session = await c.openSession();
  const prepared = c.prepare({ inputs: [INPUT0], outputs: [] }, { model: "simple", version: "" });
  await session.infer(prepared, newTiming());
  await c.close();
  await assert.rejects(session.infer(prepared, newTiming()), ConnectionError);
  await server.close();
});

Deno.test("decodeInferResponse", () => {
  const header = encoder.encode(JSON.stringify({
    outputs: [
      { name: "A", datatype: "INT32", shape: [2], parameters: { binary_data_size: 8 } },
      { name: "B", datatype: "FP32", shape: [2, 1], data: [[1.5], [2]] },
    ],
  }));
  const body = new Uint8Array(header.length + 8);
  body.set(header);
  body.set(int32(7, -7), header.length);
  const [a, b] = decodeInferResponse(body, header.length);
  assert.deepEqual(a, { name: "A", datatype: "INT32", shape: [2], data: int32(7, -7) });
  assert.deepEqual(b.data, new Uint8Array(new Float32Array([1.5, 2]).buffer));
  assert.equal(a.data.buffer === body.buffer, false);

  const big = encoder.encode(
    '{"outputs":[{"name":"I","datatype":"INT64","shape":[1],' +
      '"data":[-9223372036854775808]}]}',
  );
  const [i] = decodeInferResponse(big, -1);
  assert.equal(new DataView(i.data.buffer).getBigInt64(0, true), -9223372036854775808n);

  assert.throws(() => decodeInferResponse(header, header.length), /runs past the end/);
  assert.throws(() => decodeInferResponse(body, body.length + 1), ProtocolError);
  assert.throws(() => decodeInferResponse(encoder.encode("{oops"), -1), /Invalid JSON/);
  assert.throws(
    () =>
      decodeInferResponse(
        encoder.encode('{"outputs":[{"name":"x","datatype":"INT8","shape":[]}]}'),
        -1,
      ),
    /neither data nor binary_data_size/,
  );
});

Deno.test("serverError uses the error field or the body text, as one line", () => {
  const cases: Array<[number, string, string]> = [
    [400, '{"error":"bad"}', "Server returned 400: bad"],
    [502, "Bad Gateway\n", "Server returned 502: Bad Gateway"],
    [503, "", "Server returned 503: empty response"],
    // Triton ends shape errors with ". "; a backend may send several lines: reports take one.
    [400, '{"error":"got [4]. "}', "Server returned 400: got [4]."],
    [
      500,
      '{"error":"model failed:\\n  at line 3\\n"}',
      "Server returned 500: model failed: at line 3",
    ],
  ];
  for (const [status, body, message] of cases) {
    assert.equal(serverError(status, encoder.encode(body)).message, message);
  }
});

Deno.test("model info: inputs the configuration marks optional are marked so", () => {
  const tensor = (name: string) => ({ name, datatype: "FP32", shape: [-1, 4] });
  const info = modelInfoFromJson(
    { name: "m", versions: ["1"], inputs: [tensor("A"), tensor("B")], outputs: [tensor("C")] },
    {
      max_batch_size: 8,
      input: [{ name: "A", optional: false }, { name: "B", optional: true }],
    },
    { model: "m", version: "" },
  );
  assert.deepEqual(info.inputs, [
    { name: "A", datatype: "FP32", dims: [4] },
    { name: "B", datatype: "FP32", dims: [4], optional: true },
  ]);
});
