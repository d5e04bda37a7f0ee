import assert from "node:assert/strict";
import { InferError } from "../protocol/errors.ts";
import { encodeMessage, TfServingMessages } from "../protocol/grpc/messages.ts";
import { Status } from "../protocol/grpc/wire.ts";
import { tensorFromProto, TfServingClient } from "../protocol/tfserving.ts";
import type { RequestTiming } from "../types/timing.ts";
import { startServer } from "./server.ts";

const int32 = (values: number[]) => new Uint8Array(new Int32Array(values).buffer);
const ints = (data: Uint8Array) => [...new Int32Array(data.slice().buffer)];

function timing(): RequestTiming {
  return { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
}

Deno.test("TF Serving: signature from GetModelMetadata, Predict through the model", async () => {
  const server = await startServer();
  const client = new TfServingClient({ url: server.grpcAddr, batchSize: 2 });
  try {
    assert.deepEqual((await client.serverInfo()).extensions, []);
    const model = await client.modelInfo("simple", "");
    assert.equal(model.maxBatchSize, 2, "a -1 batch dimension takes -b");
    assert.deepEqual(model.inputs, [
      { name: "INPUT0", datatype: "INT32", dims: [16] },
      { name: "INPUT1", datatype: "INT32", dims: [16] },
    ]);
    assert.deepEqual(model.versions, ["1"]);
    const a = Array.from({ length: 32 }, (_, i) => i);
    const b = a.map(() => 1);
    const prepared = client.prepare({
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [2, 16], data: int32(a) },
        { name: "INPUT1", datatype: "INT32", shape: [2, 16], data: int32(b) },
      ],
      outputs: ["OUTPUT0", "OUTPUT1"],
    }, { model: "simple", version: "1" });
    const session = await client.openSession();
    const outputs = (await session.infer(prepared, timing(), { decodeOutputs: true }))!;
    const byName = new Map(outputs.map((t) => [t.name, t]));
    assert.deepEqual(byName.get("OUTPUT0")!.shape, [2, 16]);
    assert.deepEqual(ints(byName.get("OUTPUT0")!.data), a.map((x) => x + 1));
    assert.deepEqual(ints(byName.get("OUTPUT1")!.data), a.map((x) => x - 1));
    session.close();
    await assert.rejects(client.modelInfo("nope", ""), (e) => {
      assert.ok(e instanceof InferError);
      assert.equal(e.status, Status.NOT_FOUND);
      assert.match(e.message, /Servable not found for request: Latest\(nope\)/);
      return true;
    });
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("TF Serving: another signature name is refused by name", async () => {
  const server = await startServer();
  const client = new TfServingClient({ url: server.grpcAddr, signatureName: "classify" });
  try {
    await assert.rejects(
      client.modelInfo("simple", ""),
      /Serving signature name: "classify" not found in signature def/,
    );
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("TensorProtos sent as typed values decode like tensor_content", () => {
  const decode = (fields: Record<string, unknown>) =>
    tensorFromProto(
      "x",
      TfServingMessages.TensorProto.decode(encodeMessage(TfServingMessages.TensorProto, fields)),
    );
  const shape = { dim: [{ size: 3 }] };
  const floats = decode({ dtype: 1, tensor_shape: shape, float_val: [1.5, 2, 3] });
  assert.deepEqual([...new Float32Array(floats.data.slice().buffer)], [1.5, 2, 3]);
  const filled = decode({ dtype: 3, tensor_shape: shape, int_val: [7] });
  assert.deepEqual(ints(filled.data), [7, 7, 7], "one value fills the shape");
  const half = decode({ dtype: 19, tensor_shape: { dim: [{ size: 1 }] }, half_val: [0x3c00] });
  assert.deepEqual([...half.data], [0x00, 0x3c], "half_val holds the bit pattern");
  const text = decode({ dtype: 7, tensor_shape: { dim: [{ size: 1 }] }, string_val: [[104, 105]] });
  assert.equal(text.datatype, "BYTES");
  assert.deepEqual([...text.data], [2, 0, 0, 0, 104, 105]);
  assert.throws(
    () => decode({ dtype: 8, tensor_shape: shape }),
    /Unsupported TensorFlow data type DT_COMPLEX64/,
  );
});
