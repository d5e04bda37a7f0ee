/**
 * Run with --allow-ffi by tests/native_code_test.ts: calls the C API's
 * generated functions as Triton would (the response allocator's, then the
 * completion queue's) and prints what came of it as JSON.
 */
import { createCompletions } from "../lib/protocol/triton_c_api/completions.ts";
import { nativeAllocator } from "../lib/protocol/triton_c_api/native.ts";
import { ProcessRegions } from "../lib/protocol/triton_c_api/_regions.ts";

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

/** TRITONSERVER_ErrorNew's stand-in: records what it was given, returns a made-up error. */
const errors: Array<{ code: number; message: string }> = [];
const ERROR = 0x5eed0n;
const errorNew = new Deno.UnsafeCallback(
  { parameters: ["u32", "pointer"], result: "pointer" } as const,
  (code, message) => {
    errors.push({ code, message: Deno.UnsafePointerView.getCString(message!) });
    return Deno.UnsafePointer.create(ERROR);
  },
);

const native = nativeAllocator(() => BigInt(Deno.UnsafePointer.value(errorNew.pointer)));
if (native === undefined) {
  console.log(JSON.stringify({ native: false }));
} else {
  const alloc = new Deno.UnsafeFnPointer(native.alloc as Deno.PointerObject<typeof ALLOC>, ALLOC);
  const release = new Deno.UnsafeFnPointer(
    native.release as Deno.PointerObject<typeof RELEASE>,
    RELEASE,
  );
  /** One allocation of `size` bytes of output `name` and its release, as Triton makes them. */
  const call = (name: string, size: number, regions: Deno.PointerValue) => {
    // Filled with garbage: every field must be written.
    const buffer = new BigUint64Array([0xdeadn]);
    const userp = new BigUint64Array([0xdeadn]);
    const type = new Uint32Array([7]);
    const typeId = new BigInt64Array([7n]);
    const tensor = Deno.UnsafePointer.of(new TextEncoder().encode(`${name}\0`));
    const error = alloc.call(
      null,
      tensor,
      BigInt(size),
      0,
      0n,
      regions,
      buffer,
      userp,
      type,
      typeId,
    );
    const pointer = Deno.UnsafePointer.create(buffer[0]);
    if (pointer !== null) {
      // The memory is the caller's to write, all of it.
      const view = new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(pointer, size));
      view.fill(0xab);
    }
    // A region is not freed: free() of an ArrayBuffer's memory would abort the process.
    const released = error === null
      ? release.call(null, pointer, Deno.UnsafePointer.create(userp[0]), BigInt(size), 0, 0n)
      : null;
    return {
      size,
      error: error === null ? "none" : Deno.UnsafePointer.value(error) === ERROR ? "made" : "other",
      buffer: buffer[0],
      userp: userp[0].toString(),
      type: type[0],
      typeId: typeId[0].toString(),
      released: released === null,
    };
  };
  const results = [0, 1, 64, 1 << 20].map((size) => {
    const r = call("OUTPUT0", size, null);
    return { ...r, buffer: r.buffer === 0n ? "null" : "set" };
  });
  // Two regions, and an output without one.
  const sizes: Record<string, number> = { A: 64, B: 16 };
  // Kept to the end: the table and the regions are its memory.
  const kept = new ProcessRegions();
  const table = kept.outputs("m", [], {
    outputs: ["A", "B"],
    bytes: (name) => sizes[name],
  });
  const words = new BigUint64Array(Deno.UnsafePointerView.getArrayBuffer(table, 8 + 2 * 24));
  const bases: Record<string, bigint> = { A: words[2], B: words[5] };
  const regions = [["B", 16], ["A", 1], ["B", 17], ["C", 8], ["A", 0]].map(([name, size]) => {
    const r = call(name as string, size as number, table);
    const where = r.buffer === 0n
      ? "null"
      : r.buffer === bases[name as string]
      ? `region ${name}`
      : "heap";
    return { name, ...r, buffer: where };
  });
  native.close();
  errorNew.close();
  console.log(JSON.stringify({
    native: true,
    results,
    regions,
    errors,
    regionB: [
      ...new Uint8Array(
        Deno.UnsafePointerView.getArrayBuffer(Deno.UnsafePointer.create(bases.B)!, 16),
      ),
    ],
    tables: kept.outputs("m", [], { outputs: ["A", "B"], bytes: () => 1 }) === table,
    queued: await queued(1000),
  }));
}
