/**
 * Run with --allow-ffi by tests/native_code_test.ts: calls the C API's
 * generated functions as Triton would (the response allocator's, then the
 * completion queue's) and prints what came of it as JSON.
 */
import { createCompletions } from "../lib/protocol/triton_c_api/completions.ts";
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

const CALLBACK = { parameters: ["pointer", "u32", "pointer"], result: "void" } as const;

/** `count` calls alternating between the two callbacks, in order; what the handlers saw. */
async function queued(count: number): Promise<string[]> {
  const seen: string[] = [];
  const all = Promise.withResolvers<void>();
  const at = (p: Deno.PointerValue) => String(Deno.UnsafePointer.value(p));
  const completions = createCompletions({
    response: (pointer, flags, userp) => seen.push(`response ${at(pointer)} ${flags} ${at(userp)}`),
    release: (request, userp) => seen.push(`release ${at(request)} ${at(userp)}`),
    inflight: () => count - seen.length,
  });
  const response = new Deno.UnsafeFnPointer(
    completions.response as Deno.PointerObject<typeof CALLBACK>,
    CALLBACK,
  );
  const release = new Deno.UnsafeFnPointer(
    completions.release as Deno.PointerObject<typeof CALLBACK>,
    CALLBACK,
  );
  const timer = setInterval(() => seen.length >= count && all.resolve(), 1);
  for (let i = 1; i <= count; i++) {
    const call = i % 2 === 1 ? response : release;
    call.call(Deno.UnsafePointer.create(BigInt(i * 16)), i, Deno.UnsafePointer.create(BigInt(i)));
  }
  await all.promise;
  clearInterval(timer);
  await completions.close();
  return seen;
}

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
  console.log(JSON.stringify({ native: true, results, queued: await queued(1000) }));
}
