/**
 * The response allocator: CPU buffers for the output tensors Triton writes.
 *
 * Triton calls the allocation function on its own thread and needs the
 * buffer before it goes on. Where it can be made, the allocator is native
 * (native.ts: malloc and free, no JavaScript on Triton's threads). Otherwise
 * a JavaScript allocator costs one blocking round trip to the event loop per
 * output: its buffers are ArrayBuffers kept here by address until Triton
 * releases them (when the response is deleted, on the JS thread), so their
 * memory never moves.
 */
import { ALLOC_FN, MEMORY_CPU, RELEASE_FN, type TritonLibrary } from "./ffi.ts";
import { nativeAllocator } from "./native.ts";
import { check } from "./server.ts";

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

/** The native allocator where it can be made, else the JavaScript one. */
export function createAllocator(lib: TritonLibrary): ResponseAllocator {
  const native = nativeAllocator();
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
    (_allocator, _name, byteSize, _type, _typeId, _userp, buffer, bufferUserp, type, typeId) => {
      const size = Number(byteSize);
      let address = 0n;
      if (size > 0) {
        const memory = new ArrayBuffer(size);
        address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(memory)));
        buffers.set(address, memory);
      }
      writeU64(buffer, address);
      writeU64(bufferUserp, 0n);
      writeU32(type, MEMORY_CPU);
      writeU64(typeId, 0n);
      return null;
    },
  );
  const release = Deno.UnsafeCallback.threadSafe(RELEASE_FN, (_allocator, buffer) => {
    buffers.delete(BigInt(Deno.UnsafePointer.value(buffer)));
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
