/**
 * Run with --allow-ffi by tests/triton_c_api_test.ts: the C API client with
 * --shared-memory system on the real core (args: Triton's directory, the
 * model repository), two requests of identity_int32 (OUTPUT0 of variable
 * size, OUTPUT1 of 4 INT32 per batch element) at batch 2; prints each
 * request's output regions (name, size, bytes) read from its region table
 * after the answer, and the outputs it decoded, as JSON.
 */
import { TritonCApiClient } from "../lib/protocol/triton_c_api/mod.ts";
import type { PreparedCApiRequest } from "../lib/protocol/triton_c_api/_request.ts";
import type { Tensor } from "../lib/types/tensor.ts";

const [directory, repository] = Deno.args;
const client = await TritonCApiClient.start({
  directory,
  repository,
  verbose: false,
  sharedMemory: { batchSize: 2, outputSharedMemorySize: 64 },
});

const int32 = (name: string, shape: number[], values: number[]): Tensor => ({
  name,
  datatype: "INT32",
  shape,
  data: new Uint8Array(Int32Array.from(values).buffer),
});

/** The regions a request's table lists, with what they hold. */
function regions(table: Deno.PointerObject) {
  const view = new Deno.UnsafePointerView(table);
  return Array.from({ length: Number(view.getBigUint64(0)) }, (_, i) => {
    const at = 8 + 24 * i;
    const size = Number(view.getBigUint64(at + 16));
    const base = Deno.UnsafePointer.create(view.getBigUint64(at + 8))!;
    return {
      name: Deno.UnsafePointerView.getCString(view.getPointer(at)!),
      size,
      bytes: [...new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(base, size))],
    };
  });
}

try {
  const target = { model: "identity_int32", version: "" };
  await client.modelInfo(target.model, target.version);
  const requests = [1, 100].map((start) =>
    client.prepare({
      inputs: [
        int32("INPUT0", [2, 5], Array.from({ length: 10 }, (_, i) => start + i)),
        int32("INPUT1", [2, 4], Array.from({ length: 8 }, (_, i) => -start - i)),
      ],
      outputs: ["OUTPUT0", "OUTPUT1"],
    }, target) as PreparedCApiRequest
  );
  const answers = [];
  for (const request of requests) {
    const timing = { start: 0, sendEnd: 0, recvStart: 0, end: 0, responses: 0 };
    const outputs = await client.send(request, timing, { decodeOutputs: true }) ?? [];
    answers.push({
      inputs: request.inputs.map((input) => [...input.data]),
      decoded: outputs.map((tensor) => ({ name: tensor.name, bytes: [...tensor.data] })),
    });
  }
  console.log(JSON.stringify({
    answers,
    regions: requests.map((request) => regions(request.outputRegions!)),
  }));
} finally {
  await client.close();
}
