import assert from "node:assert/strict";
import { ModelConfigError } from "./config.ts";
import { startServer } from "./server.ts";
import { startServerInWorker } from "./worker_client.ts";

Deno.test("custom models, a taken port and an abort signal", async () => {
  const controller = new AbortController();
  const server = await startServer({
    signal: controller.signal,
    models: [{
      name: "echo",
      versions: ["1", "2"],
      kind: "identity",
      inputs: [{ name: "TEXT", datatype: "BYTES", dims: [-1] }],
      outputs: [{ name: "TEXT", datatype: "BYTES", dims: [-1] }],
    }],
  });
  const url = `http://${server.addr}`;
  const response = await fetch(`${url}/v2/models/echo/infer`, {
    method: "POST",
    body: JSON.stringify({
      inputs: [{ name: "TEXT", datatype: "BYTES", shape: [2], data: ["a", "héllo"] }],
    }),
  });
  const body = await response.json();
  assert.equal(body.model_version, "2");
  assert.deepEqual(body.outputs[0].data, ["a", "héllo"]);
  await assert.rejects(
    startServer({ httpPort: server.httpPort }),
    (e: Error) => e instanceof Deno.errors.AddrInUse,
  );
  controller.abort();
  await server.close();
  await assert.rejects(fetch(`${url}/v2`), TypeError);
});

Deno.test("invalid models are rejected before listening", async () => {
  await assert.rejects(
    startServer({ models: [] }),
    (e: Error) => e instanceof ModelConfigError && e.source === "options.models",
  );
});

Deno.test("the server runs in a worker", async () => {
  const server = await startServerInWorker({});
  try {
    assert.ok(server.httpPort > 0 && server.metricsPort > 0);
    const response = await fetch(`http://${server.addr}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(2) },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(3) },
        ],
      }),
    });
    const body = await response.json();
    assert.deepEqual(body.outputs[1].data, new Array(16).fill(-1));
  } finally {
    await server.close();
  }
  await assert.rejects(
    startServerInWorker({ models: [{ name: "" } as never] }),
    (e: Error) => e.message.includes('field "name"'),
  );
});
