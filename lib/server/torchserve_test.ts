import assert from "node:assert/strict";
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { InputError } from "../input/errors.ts";
import { TORCHSERVE_INPUT, TorchServeClient } from "../protocol/torchserve.ts";
import type { RequestTiming } from "../types/timing.ts";
import { startServer } from "./server.ts";

function timing(): RequestTiming {
  return { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
}

const naming = (file: string) => ({
  inputs: [{
    name: TORCHSERVE_INPUT,
    datatype: "BYTES" as const,
    shape: [1],
    data: encodeBytesElements([file]),
  }],
  outputs: [],
});

Deno.test("TorchServe: the file named in the input data is the body, echoed by the model", async () => {
  const server = await startServer();
  const client = new TorchServeClient({ url: server.addr });
  const file = await Deno.makeTempFile({ suffix: ".jpg" });
  const image = new Uint8Array(3000).map((_, i) => i % 251);
  await Deno.writeFile(file, image);
  try {
    const session = await client.openSession();
    const prepared = client.prepare(naming(file), { model: "identity_image", version: "" });
    const [output] = (await session.infer(prepared, timing(), { decodeOutputs: true }))!;
    assert.deepEqual(decodeBytesElements(output.data)[0], image);
    const t = timing();
    assert.equal(await session.infer(prepared, t), undefined);
    assert.equal(t.responses, 1);
    await assert.rejects(
      session.infer(client.prepare(naming(file), { model: "simple", version: "" }), timing()),
      /Server returned 400: .*needs a single UINT8 or BYTES input/,
    );
    await assert.rejects(
      session.infer(client.prepare(naming(file), { model: "nope", version: "" }), timing()),
      /Server returned 404/,
    );
    session.close();
    assert.throws(
      () => client.prepare(naming("/nonexistent.jpg"), { model: "m", version: "" }),
      (e) => e instanceof InputError && /Cannot read "\/nonexistent.jpg"/.test(e.message),
    );
  } finally {
    await client.close();
    await server.close();
    await Deno.remove(file);
  }
});
