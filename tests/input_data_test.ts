/**
 * Input data end to end: the seeds' example files and every datatype go
 * through the loader, the client's encoding and the reference server and
 * come back as decoded outputs; validation and input errors as the CLI
 * reports them.
 */
import assert from "node:assert/strict";
import { encodeBytesElements, tensorFromJson } from "../lib/input/codec.ts";
import { type Datatype, DATATYPES } from "../lib/types/datatype.ts";
import { parseInputData } from "../lib/input/input_data.ts";
import { buildRequests, type InputOptions } from "../lib/input/requests.ts";
import { KServeHttpClient, type TensorFormat } from "../lib/protocol/kserve_http.ts";
import type { RequestTiming } from "../lib/types/timing.ts";
import type { OutputTensors } from "../lib/protocol/types.ts";
import type { Tensor } from "../lib/types/tensor.ts";
import { type RunningServer, startServer } from "../lib/server/mod.ts";
import { DEFAULT_MODELS, type ModelConfig } from "../lib/server/config.ts";
import { InferError } from "../lib/protocol/errors.ts";
import { runCli, withServer } from "./_helpers.ts";

const FIXTURES = new URL("../fixtures/input_data/", import.meta.url).pathname;
/** Triton takes and gives FP16 and BF16 only as binary data, so JSON tensors leave them out. */
const JSON_DATATYPES = DATATYPES.filter((d) => d !== "FP16" && d !== "BF16");
const IDENTITY_JSON: ModelConfig = {
  name: "identity_json",
  kind: "identity",
  max_batch_size: 8,
  inputs: JSON_DATATYPES.map((d) => ({ name: `INPUT_${d}`, datatype: d, dims: [-1] })),
  outputs: JSON_DATATYPES.map((d) => ({ name: `OUTPUT_${d}`, datatype: d, dims: [-1] })),
};

function inputOptions(data: string[], overrides: Partial<InputOptions> = {}): InputOptions {
  return {
    batchSize: 1,
    shapes: new Map(),
    inputData: parseInputData(data),
    stringLength: 8,
    validationTolerance: 0,
    ...overrides,
  };
}

async function withClient(
  formats: { input: TensorFormat; output: TensorFormat },
  fn: (client: KServeHttpClient) => Promise<void>,
): Promise<void> {
  const server: RunningServer = await startServer({ models: [...DEFAULT_MODELS, IDENTITY_JSON] });
  const client = new KServeHttpClient({
    url: server.addr,
    inputFormat: formats.input,
    outputFormat: formats.output,
  });
  try {
    await fn(client);
  } finally {
    await client.close();
    await server.close();
  }
}

/** Sends every planned request once; returns the decoded outputs and the validation results. */
async function sendAll(
  client: KServeHttpClient,
  model: string,
  options: InputOptions,
): Promise<{ sent: Tensor[][]; received: OutputTensors[]; problems: (string | undefined)[] }> {
  const info = await client.modelInfo(model, "");
  const plan = await buildRequests(info, options);
  const session = await client.openSession();
  const timing: RequestTiming = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
  const received: OutputTensors[] = [];
  const problems: (string | undefined)[] = [];
  try {
    for (const [i, request] of plan.requests.entries()) {
      const prepared = client.prepare(request, { model, version: "" });
      const outputs = (await session.infer(prepared, timing, { decodeOutputs: true }))!;
      received.push(outputs);
      problems.push(plan.checks?.[i]?.(outputs));
    }
  } finally {
    session.close();
  }
  return { sent: plan.requests.map((r) => r.inputs), received, problems };
}

/** Identity models answer OUTPUT<x> with INPUT<x>, byte for byte and in shape. */
function assertEchoed(sent: Tensor[][], received: readonly OutputTensors[]): void {
  assert.equal(received.length, sent.length);
  sent.forEach((inputs, i) => {
    for (const input of inputs) {
      const output = received[i].find((o) => o.name === input.name.replace("INPUT", "OUTPUT"));
      assert.ok(output, `${input.name} echoed`);
      assert.equal(output.datatype, input.datatype);
      assert.deepEqual(output.shape, input.shape, input.name);
      assert.deepEqual(output.data, input.data, `${input.datatype} ${input.name} data`);
    }
  });
}

Deno.test("every seed example loads and is sent to the reference server", async () => {
  await withClient({ input: "binary", output: "binary" }, async (client) => {
    const examples: Array<[string, string, Partial<InputOptions>, number]> = [
      // [model, file, options, requests]
      ["sub_add", "steps.json", {}, 4],
      ["simple", "steps.json", { batchSize: 4 }, 1],
      ["identity_uint8", "b64.json", {}, 3],
      ["identity_string", "streams.json", {}, 9],
      ["identity_int32", "shapes.json", {}, 4],
      ["identity_image", "image.json", {}, 2],
    ];
    for (const [model, file, overrides, count] of examples) {
      const { sent, received } = await sendAll(
        client,
        model,
        inputOptions([FIXTURES + file], overrides),
      );
      assert.equal(sent.length, count, `${model} ${file}`);
      if (model.startsWith("identity")) assertEchoed(sent, received);
      else assert.equal(received[0].length, 2);
    }
    const shaped = await sendAll(
      client,
      "identity_int32",
      inputOptions([FIXTURES + "shapes.json"]),
    );
    assert.deepEqual(shaped.received.map((o) => o[0].shape), [[2, 8], [8, 2], [4, 4], [4, 4]]);
    const validated = await sendAll(
      client,
      "sub_add",
      inputOptions([FIXTURES + "validation.json"]),
    );
    assert.deepEqual(validated.problems, [undefined]);
    const directory = await sendAll(
      client,
      "simple",
      inputOptions([FIXTURES + "simple_dir"], { batchSize: 3 }),
    );
    assert.deepEqual(directory.sent[0][0].shape, [3, 16]);
    assert.deepEqual(directory.problems, [undefined]);
  });
});

const SAMPLES: Record<Datatype, unknown[]> = {
  BOOL: [true, false, true],
  UINT8: [0, 255, 7],
  UINT16: [0, 65535, 7],
  UINT32: [0, 4294967295, 7],
  UINT64: [0, 18446744073709551615n, 9007199254740993n],
  INT8: [-128, 127, 0],
  INT16: [-32768, 32767, 0],
  INT32: [-2147483648, 2147483647, 0],
  INT64: [-9223372036854775808n, 9223372036854775807n, -1],
  FP16: [0.5, -65504, "NaN"],
  BF16: [1.5, -3.3895313892515355e38, "Infinity"],
  FP32: [0.1, -3.4028234663852886e38, "-Infinity"],
  FP64: [0.1, Number.MAX_VALUE, 5e-324],
  BYTES: ["", "h\u00e9llo", "\u{1F600}"],
};

function rawOf(datatype: Datatype): Uint8Array {
  const values = SAMPLES[datatype];
  return datatype === "BYTES"
    ? encodeBytesElements(values as string[])
    : tensorFromJson(datatype, values);
}

Deno.test("every datatype round-trips through JSON and binary encodings", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const [file, datatypes] of [["all", DATATYPES], ["json", JSON_DATATYPES]] as const) {
      const explicit = Object.fromEntries(datatypes.map((d) => [`INPUT_${d}`, SAMPLES[d]]));
      const b64 = Object.fromEntries(
        datatypes.map((d) => [`INPUT_${d}`, { content: { b64: rawOf(d).toBase64() }, shape: [3] }]),
      );
      const text = JSON.stringify(
        { data: [explicit, b64] },
        (_k, v) => typeof v === "bigint" ? v.toString() : v,
      );
      await Deno.writeTextFile(`${dir}/${file}.json`, text);
    }
    for (const input of ["binary", "json"] as const) {
      for (const output of ["binary", "json"] as const) {
        const binary = input === "binary" && output === "binary";
        await withClient({ input, output }, async (client) => {
          const { sent, received } = await sendAll(
            client,
            binary ? "identity_all" : "identity_json",
            inputOptions([`${dir}/${binary ? "all" : "json"}.json`]),
          );
          assertEchoed(sent, received);
          for (const tensor of sent[0]) {
            assert.deepEqual(tensor.data, rawOf(tensor.datatype), `${tensor.datatype} from JSON`);
          }
          assert.deepEqual(sent[0].map((t) => t.data), sent[1].map((t) => t.data), "b64 = JSON");
          if (binary) return;
          await assert.rejects(
            sendAll(client, "identity_all", inputOptions([`${dir}/all.json`])),
            (e: unknown) =>
              e instanceof InferError && e.status === 400 &&
              /(receiving|sending) (FP16|BF16) data via JSON is not supported/.test(e.message),
          );
        });
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Runs in a child with V8's gc() exposed, so retained memory can be told
 * from garbage: loads a 10 MB tensor file, prepares it, sends it 20 times.
 */
const MEMORY_PROBE = `
import { parseInputData } from "./lib/input/input_data.ts";
import { buildRequests } from "./lib/input/requests.ts";
import { KServeHttpClient } from "./lib/protocol/kserve_http.ts";
import { startServerInWorker } from "./lib/server/mod.ts";
const [dir, size] = [Deno.args[0], Number(Deno.args[1])];
await Deno.writeFile(dir + "/INPUT", new Uint8Array(size).fill(7));
const server = await startServerInWorker();
const client = new KServeHttpClient({ url: server.addr, inputFormat: "binary", outputFormat: "binary" });
const info = await client.modelInfo("identity_image", "");
const retained = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  return Deno.memoryUsage().external;
};
const base = await retained();
const plan = await buildRequests(info, {
  batchSize: 1, shapes: new Map(), inputData: parseInputData([dir]), stringLength: 8,
  validationTolerance: 0,
});
const prepared = plan.requests.map((r) => client.prepare(r, { model: info.name, version: "" }));
const ready = await retained() - base;
const session = await client.openSession();
const timing = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
for (let i = 0; i < 20; i++) await session.infer(prepared[0], timing);
const sent = await retained() - base;
session.close();
await client.close();
await server.close();
const shape = plan.requests[0].inputs[0].shape;
console.log(JSON.stringify({ requests: prepared.length, shape, ready, sent }));
`;

Deno.test("a 10 MB tensor file loads once and is sent without copies per request", async () => {
  const dir = await Deno.makeTempDir();
  const size = 10_000_000;
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--v8-flags=--expose-gc", MEMORY_PROBE, dir, String(size)],
      cwd: new URL("..", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const probe = JSON.parse(text);
    assert.equal(probe.requests, 1);
    assert.deepEqual(probe.shape, [1, size]);
    // The data as loaded and as the encoded request, and nothing more per send.
    assert.ok(probe.ready < 2.2 * size, text);
    assert.ok(probe.sent - probe.ready < 0.5 * size, text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function cli(addr: string, ...args: string[]) {
  return runCli(["-u", addr, "--request-count", "40", ...args], { timeoutMs: 30_000 });
}

Deno.test("validation passes with correct data and fails, counted and reported, with wrong", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = JSON.parse(await Deno.readTextFile(`${FIXTURES}validation.json`));
    const wrong = structuredClone(good);
    wrong.validation_data[0].OUTPUT1[5] = 3;
    await Deno.writeTextFile(
      `${dir}/mixed.json`,
      JSON.stringify({
        data: [...good.data, ...wrong.data],
        validation_data: [...good.validation_data, ...wrong.validation_data],
      }),
    );
    await withServer(async (server) => {
      const ok = await cli(
        server.addr,
        "-m",
        "sub_add",
        "--input-data",
        FIXTURES + "validation.json",
      );
      assert.equal(ok.code, 0, ok.stderr + ok.stdout);
      const directory = await cli(
        server.addr,
        "-m",
        "simple",
        "-b",
        "4",
        "--input-data",
        FIXTURES + "simple_dir",
      );
      assert.equal(directory.code, 0, directory.stderr + directory.stdout);
      const bad = await cli(server.addr, "-m", "sub_add", "--input-data", `${dir}/mixed.json`);
      assert.equal(bad.code, 3, bad.stderr + bad.stdout);
      assert.match(bad.stdout, /Failed requests: 20/);
      assert.match(
        bad.stdout,
        /Output doesn't match expected output: OUTPUT1 at "\S+mixed\.json" data\[1\], element 5: expected 3, got 2/,
      );
      assert.match(bad.stderr, /20 requests failed/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("input errors exit 1 with one line saying where, before any request", async () => {
  await withServer(async (server) => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["-m", "sub_add", "--input-data", "no/such.json"],
        /^error: --input-data "no\/such\.json": no such file or directory$/,
      ],
      [
        ["-m", "identity_image", "--input-data", FIXTURES + "steps.json"],
        /^error: "\S+steps\.json" data\[0\]: The input or output 'INPUT0' is not found in the model configuration \(model "identity_image" has inputs/,
      ],
      [
        ["-m", "identity_int32", "--input-data", FIXTURES + "shapes.json", "--shape", "INPUT:4,4"],
        /^error: "\S+shapes\.json" data\[0\]\.INPUT: The supplied shape of \[2,8\] for input "INPUT" is incompatible with the model's input shape of \[4,4\] \(/,
      ],
      [
        ["-m", "slow", "-b", "2"],
        /^error: can not specify batch size > 1 as the model does not support batching/,
      ],
      [["-m", "simple", "-b", "16"], /^error: expecting batch size <= 8 for model "simple"/],
      [
        ["-m", "simple", "--input-data", "INPUT2:zero"],
        /^error: Option --input-data names "INPUT2", which is not an input of model "simple"/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await cli(server.addr, ...args);
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr.trimEnd(), message);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.doesNotMatch(r.stdout, /Request concurrency/);
    }
  });
});
