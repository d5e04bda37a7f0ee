/**
 * The response allocator: CPU buffers for the output tensors Triton writes.
 *
 * Triton calls the allocation function on its own thread and needs the
 * buffer before it goes on. A request with output regions (_regions.ts:
 * --shared-memory system) has each output written into its region, or
 * failed with perf_analyzer's error when it does not fit; other outputs get
 * a buffer of their own. Where it can be made, the allocator is native
 * (native.ts: regions, malloc and free, no JavaScript on Triton's threads).
 * Otherwise a JavaScript allocator costs one blocking round trip to the event
 * loop per output: its buffers are ArrayBuffers kept here by address until
 * Triton releases them (when the response is deleted, on the JS thread), so
 * their memory never moves.
 */
import { ALLOC_FN, MEMORY_CPU, RELEASE_FN, type TritonLibrary } from "./ffi.ts";
import { ERROR_INTERNAL, nativeAllocator, OUTPUT_TOO_LARGE } from "./native.ts";
import { TABLE_ENTRY, TABLE_HEADER } from "./_regions.ts";
import { check, cString } from "./server.ts";

export interface ResponseAllocator {
  /** The TRITONSERVER_ResponseAllocator*. */
  readonly pointer: Deno.PointerObject;
  close(): void;
}

function writeU64(pointer: Deno.PointerValue, value: bigint): void {
  if (pointer !== null) {
    new BigUint64Array(Deno.UnsafePointerView.getArrayBuffer(pointer, 8))[0] = value;
  }
}

function writeU32(pointer: Deno.PointerValue, value: number): void {
  if (pointer !== null) {
    new Uint32Array(Deno.UnsafePointerView.getArrayBuffer(pointer, 4))[0] = value;
  }
}

/** A TRITONSERVER_ResponseAllocator with these functions. */
function newAllocator(
  lib: TritonLibrary,
  alloc: Deno.PointerObject,
  release: Deno.PointerObject,
): Deno.PointerObject {
  const cell = new BigUint64Array(1);
  check(
    lib,
    lib.symbols.TRITONSERVER_ResponseAllocatorNew(cell, alloc, release, null),
    "Creating the response allocator",
  );
  return Deno.UnsafePointer.create(cell[0])!;
}

/** The region of output `name` in the output table at `table`, if it has one. */
function regionOf(
  table: Deno.PointerObject,
  name: string,
): { base: bigint; size: bigint } | undefined {
  const view = new Deno.UnsafePointerView(table);
  const count = Number(view.getBigUint64(0));
  for (let i = 0; i < count; i++) {
    const at = TABLE_HEADER + TABLE_ENTRY * i;
    if (Deno.UnsafePointerView.getCString(view.getPointer(at)!) === name) {
      return { base: view.getBigUint64(at + 8), size: view.getBigUint64(at + 16) };
    }
  }
  return undefined;
}

/** OUTPUT_TOO_LARGE filled in, as the native allocator's snprintf does. */
export function outputTooLarge(name: string, region: bigint, needed: bigint): string {
  const values = [name, String(region), String(needed)];
  return OUTPUT_TOO_LARGE.replace(/%s|%zu/g, () => values.shift()!);
}

/**
 * The native allocator where it can be made, else the JavaScript one.
 * `library` is the path of the loaded libtritonserver.so (whose
 * TRITONSERVER_ErrorNew the native code calls).
 */
export function createAllocator(lib: TritonLibrary, library: string): ResponseAllocator {
  const native = nativeAllocator((code) => code.loadedAddress(library, "TRITONSERVER_ErrorNew"));
  if (native !== undefined) {
    const pointer = newAllocator(lib, native.alloc, native.release);
    return {
      pointer,
      close() {
        lib.symbols.TRITONSERVER_ResponseAllocatorDelete(pointer);
        native.close();
      },
    };
  }
  const buffers = new Map<bigint, ArrayBuffer>();
  const alloc = Deno.UnsafeCallback.threadSafe(
    ALLOC_FN,
    (_allocator, name, byteSize, _type, _typeId, userp, buffer, bufferUserp, type, typeId) => {
      const size = BigInt(byteSize);
      let address = 0n;
      writeU64(bufferUserp, 0n);
      writeU32(type, MEMORY_CPU);
      writeU64(typeId, 0n);
      const region = size > 0n && userp !== null
        ? regionOf(userp, Deno.UnsafePointerView.getCString(name!))
        : undefined;
      if (region !== undefined) {
        if (size > region.size) {
          writeU64(buffer, 0n);
          const message = outputTooLarge(
            Deno.UnsafePointerView.getCString(name!),
            region.size,
            size,
          );
          return lib.symbols.TRITONSERVER_ErrorNew(ERROR_INTERNAL, cString(message));
        }
        address = region.base;
        writeU64(bufferUserp, 1n);
      } else if (size > 0n) {
        const memory = new ArrayBuffer(Number(size));
        address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(memory)));
        buffers.set(address, memory);
      }
      writeU64(buffer, address);
      return null;
    },
  );
  const release = Deno.UnsafeCallback.threadSafe(RELEASE_FN, (_allocator, buffer, bufferUserp) => {
    // A region (buffer_userp set) stays: it is no buffer of this map's.
    if (bufferUserp === null) buffers.delete(BigInt(Deno.UnsafePointer.value(buffer)));
    return null;
  });
  const pointer = newAllocator(lib, alloc.pointer, release.pointer);
  return {
    pointer,
    close() {
      lib.symbols.TRITONSERVER_ResponseAllocatorDelete(pointer);
      alloc.close();
      release.close();
    },
  };
}
