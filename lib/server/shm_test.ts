import assert from "node:assert/strict";
import { GrpcClient } from "../protocol/grpc/client.ts";
import { KServeHttpClient } from "../protocol/kserve_http.ts";
import { InferError } from "../protocol/errors.ts";
import { SystemSharedMemory } from "../protocol/shm.ts";
import type { InferenceClient } from "../protocol/types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { RequestTiming } from "../types/timing.ts";
import { startServer } from "./server.ts";
import type { SharedMemoryControl } from "../protocol/shm.ts";

const target = { model: "identity_fp32", version: "" };

function request(values: number[]): InferRequest {
  const data = new Uint8Array(new Float32Array(values).buffer);
  return {
    inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, values.length], data }],
    outputs: ["OUTPUT0"],
  };
}

const floats = (data: Uint8Array) => [...new Float32Array(data.slice().buffer)];

function timing(): RequestTiming {
  return { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
}

/** Runs `fn` with a server and a client of each protocol whose shared memory lives in a temporary directory. */
async function withClients(
  fn: (
    client: InferenceClient & SharedMemoryControl,
    options: { directory: string; protocol: string },
  ) => Promise<void>,
): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "inferperf_shm_" });
  const server = await startServer({ sharedMemoryDirectory: directory });
  try {
    for (const protocol of ["http", "grpc"]) {
      const client = protocol === "http"
        ? new KServeHttpClient({ url: server.addr, inputFormat: "binary", outputFormat: "binary" })
        : new GrpcClient({ url: server.grpcAddr });
      try {
        await fn(client, { directory, protocol });
      } finally {
        await client.close();
      }
    }
  } finally {
    await server.close();
    await Deno.remove(directory, { recursive: true });
  }
}

Deno.test("requests name regions; the server reads the inputs from the very file", async () => {
  await withClients(async (client, { directory, protocol }) => {
    const values = Array.from({ length: 1024 }, (_, i) => i);
    const original = request(values);
    const memory = new SystemSharedMemory([original], { outputByteSize: () => 8192, directory });
    assert.equal((await Array.fromAsync(Deno.readDir(directory))).length, 2);
    await memory.register(client);
    const prepared = client.prepare(memory.place(original), target);
    assert.ok(prepared.byteLength < 1024, `${protocol}: ${prepared.byteLength} bytes sent`);
    const session = await client.openSession();
    const [output] = (await session.infer(prepared, timing(), { decodeOutputs: true }))!;
    assert.deepEqual(floats(output.data), values, protocol);
    // The region is the file: what is written there is what the next request sends.
    const input = memory.regions[0];
    const file = await Deno.open(`${directory}${input.key}`, { write: true });
    await file.write(new Uint8Array(new Float32Array([-1, -2]).buffer));
    file.close();
    const [changed] = (await session.infer(prepared, timing(), { decodeOutputs: true }))!;
    assert.deepEqual(floats(changed.data).slice(0, 3), [-1, -2, 2], protocol);
    session.close();
    await memory.release(client);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(directory)), [], "objects removed");
    await assert.rejects(
      (await client.openSession()).infer(prepared, timing()),
      /Unable to find shared memory region/,
      `${protocol}: released regions are unregistered`,
    );
  });
});

Deno.test("registering checks the object; outputs must fit their regions", async () => {
  await withClients(async (client, { directory, protocol }) => {
    // Triton's statuses: both are internal errors (HTTP 500, gRPC INTERNAL).
    const internal = protocol === "http" ? 500 : 13;
    const region = { name: "r", key: "/missing", offset: 0, byteSize: 16 };
    await assert.rejects(
      client.registerSystemSharedMemory(region),
      (e) =>
        e instanceof InferError && e.status === internal &&
        /Unable to open shared memory region: '\/missing'$/.test(e.message),
    );
    await Deno.writeFile(`${directory}/small`, new Uint8Array(8));
    await assert.rejects(
      client.registerSystemSharedMemory({ ...region, key: "/small" }),
      /exceeds the 8 bytes of '\/small'/,
    );
    await Deno.remove(`${directory}/small`);
    const small = request([1, 2, 3]);
    const memory = new SystemSharedMemory([small], { outputByteSize: () => 8, directory });
    await memory.register(client);
    await assert.rejects(
      client.registerSystemSharedMemory(memory.regions[0]),
      /already in manager/,
      protocol,
    );
    const session = await client.openSession();
    await assert.rejects(
      session.infer(client.prepare(memory.place(small), target), timing()),
      (e) =>
        e instanceof InferError && e.status === internal &&
        /should be at least 12 bytes to hold the results/.test(e.message),
      protocol,
    );
    session.close();
    await memory.release(client);
  });
});
