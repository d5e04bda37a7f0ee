import assert from "node:assert/strict";
import { startServer } from "./server.ts";

const TENSOR = 'input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]\n' +
  'output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]\n';

/** A model repository: `slow` (40 ms, 1 instance), `fast` (5 ms) and `bls` calling both. */
function repository(): string {
  const root = Deno.makeTempDirSync({ prefix: "inferperf_repository_" });
  const models: Record<string, string> = {
    slow: `backend: "identity"\nmax_batch_size: 0\n${TENSOR}` +
      'parameters [ { key: "execute_delay_ms", value: { string_value: "40" } } ]\n',
    fast: `backend: "identity"\nmax_batch_size: 0\n${TENSOR}` +
      'parameters [ { key: "execute_delay_ms", value: { string_value: "5" } } ]\n',
    bls: `backend: "python"\nmax_batch_size: 0\n${TENSOR}` +
      "instance_group [ { kind: KIND_CPU, count: 4 } ]\n" +
      'parameters [ { key: "bls_models", value: { string_value: "slow,fast" } } ]\n',
  };
  for (const [name, config] of Object.entries(models)) {
    Deno.mkdirSync(`${root}/${name}/1`, { recursive: true });
    Deno.writeTextFileSync(`${root}/${name}/config.pbtxt`, config);
  }
  Deno.mkdirSync(`${root}/empty`);
  Deno.writeTextFileSync(`${root}/empty/config.pbtxt`, `backend: "identity"\n${TENSOR}`);
  return root;
}

async function post(url: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

const INFER = {
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [4], data: [1, 2, 3, 4] }],
};

/** Milliseconds until `n` requests sent at once to `model` have all been answered. */
async function burst(base: string, model: string, n: number): Promise<number> {
  const start = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, () => post(`${base}/v2/models/${model}/infer`, INFER)),
  );
  for (const a of answers) assert.equal(a.status, 200, a.text);
  return performance.now() - start;
}

Deno.test("the repository API loads, reloads with a config override and unloads, in Triton's words", async () => {
  const root = repository();
  const server = await startServer({ modelRepository: root, modelControlMode: "explicit" });
  const base = `http://${server.addr}`;
  try {
    assert.deepEqual(JSON.parse((await post(`${base}/v2/repository/index`)).text), [
      { name: "bls" },
      { name: "empty" },
      { name: "fast" },
      { name: "slow" },
    ]);
    assert.deepEqual(await post(`${base}/v2/repository/models/nosuch/load`), {
      status: 500,
      text: `{"error":"failed to load 'nosuch', failed to poll from model repository"}`,
    });
    const empty = await post(`${base}/v2/repository/models/empty/load`);
    assert.equal(empty.status, 400);
    assert.match(empty.text, /at least one version must be available under the version policy/);
    for (const name of ["slow", "fast", "bls"]) {
      assert.equal((await post(`${base}/v2/repository/models/${name}/load`)).status, 200);
    }
    // The BLS model's answer is its calls' (identity, identity): the input.
    const answer = await post(`${base}/v2/models/bls/infer`, INFER);
    assert.deepEqual(JSON.parse(answer.text).outputs[0].data, [1, 2, 3, 4]);
    // Four BLS requests at once queue at slow's one instance: 4 x 40 ms ...
    const one = await burst(base, "bls", 4);
    assert.ok(one >= 160, `${one} ms`);
    // ... and slow reloaded under its name with 4 instances serves them at once.
    const config = {
      backend: "identity",
      input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: [4] }],
      output: [{ name: "OUTPUT0", data_type: "TYPE_FP32", dims: [4] }],
      instance_group: [{ kind: "KIND_CPU", count: 4 }],
      parameters: { execute_delay_ms: { string_value: "40" } },
    };
    const reload = await post(`${base}/v2/repository/models/slow/load`, {
      parameters: { config: JSON.stringify(config) },
    });
    assert.equal(reload.status, 200, reload.text);
    const four = await burst(base, "bls", 4);
    assert.ok(four >= 45 && four < one * 0.75, `${four} ms against ${one} ms`);
    assert.equal((await post(`${base}/v2/repository/models/slow/unload`)).status, 200);
    assert.deepEqual(
      JSON.parse((await post(`${base}/v2/repository/index`, { ready: true })).text),
      [
        { name: "bls", version: "1", state: "READY" },
        { name: "fast", version: "1", state: "READY" },
      ],
    );
    const failed = await post(`${base}/v2/models/bls/infer`, INFER);
    assert.equal(failed.status, 500);
    assert.match(failed.text, /'slow' has no available versions/);
    const unloaded = await post(`${base}/v2/models/slow/infer`, INFER);
    assert.deepEqual(unloaded, {
      status: 404,
      text: `{"error":"Request for unknown model: 'slow' has no available versions"}`,
    });
  } finally {
    await server.close();
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("without explicit model control, loads and unloads are refused as Triton refuses them", async () => {
  const server = await startServer({});
  try {
    const answer = await post(`http://${server.addr}/v2/repository/models/simple/unload`);
    assert.deepEqual(answer, {
      status: 503,
      text: `{"error":"explicit model load / unload is not allowed if polling is enabled"}`,
    });
  } finally {
    await server.close();
  }
});
