/**
 * Run with --allow-ffi by tests/native_allocator_test.ts: calls the native
 * response allocator's functions as Triton would and prints what they wrote.
 */
import { nativeAllocator } from "../lib/protocol/triton_c_api/native.ts";

const ALLOC = {
  parameters: [
    "pointer",
    "pointer",
    "usize",
    "u32",
    "i64",
    "pointer",
    "buffer",
    "buffer",
    "buffer",
    "buffer",
  ],
  result: "pointer",
} as const;
const RELEASE = {
  parameters: ["pointer", "pointer", "pointer", "usize", "u32", "i64"],
  result: "pointer",
} as const;

const native = nativeAllocator();
if (native === undefined) {
  console.log(JSON.stringify({ native: false }));
} else {
  const alloc = new Deno.UnsafeFnPointer(native.alloc as Deno.PointerObject<typeof ALLOC>, ALLOC);
  const release = new Deno.UnsafeFnPointer(
    native.release as Deno.PointerObject<typeof RELEASE>,
    RELEASE,
  );
  const results = [];
  for (const size of [0, 1, 64, 1 << 20]) {
    // Filled with garbage: every field must be written.
    const buffer = new BigUint64Array([0xdeadn]);
    const userp = new BigUint64Array([0xdeadn]);
    const type = new Uint32Array([7]);
    const typeId = new BigInt64Array([7n]);
    const error = alloc.call(null, null, BigInt(size), 0, 0n, null, buffer, userp, type, typeId);
    const pointer = Deno.UnsafePointer.create(buffer[0]);
    if (pointer !== null) {
      // The memory is the caller's to write, all of it.
      const view = new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(pointer, size));
      view.fill(0xab);
    }
    const released = release.call(null, pointer, null, BigInt(size), 0, 0n);
    results.push({
      size,
      error: error === null,
      buffer: buffer[0] === 0n ? "null" : "set",
      userp: userp[0].toString(),
      type: type[0],
      typeId: typeId[0].toString(),
      released: released === null,
    });
  }
  native.close();
  console.log(JSON.stringify({ native: true, results }));
}
