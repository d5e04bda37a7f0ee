/**
 * Native callbacks for the in-process server, generated at run time.
 *
 * Triton calls the response allocator on its own thread and waits for the
 * buffer before the model computes; a JavaScript allocator turns that into a
 * blocking round trip to the event loop per output, which held inferperf to
 * a quarter of a C client's rate and made more requests in flight slower
 * (BENCHMARKS.md, issue 19). inferperf ships no native library, so on x86-64
 * Linux the allocator is a few dozen bytes of machine code written to an
 * executable mapping: write an output into its region (--shared-memory
 * system) or allocate it with libc's malloc, release with free, report CPU
 * memory. Elsewhere (or where the mapping is refused) the JavaScript
 * allocator is used.
 */

const encoder = new TextEncoder();

const LIBC_SYMBOLS = {
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  mprotect: { parameters: ["pointer", "usize", "i32"], result: "i32" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  dlsym: { parameters: ["pointer", "buffer"], result: "pointer" },
  dlopen: { parameters: ["buffer", "i32"], result: "pointer" },
  dlclose: { parameters: ["pointer"], result: "i32" },
  sem_init: { parameters: ["pointer", "i32", "u32"], result: "i32" },
  // On a thread of Deno's blocking pool: the event loop goes on meanwhile.
  sem_wait: { parameters: ["pointer"], result: "i32", nonblocking: true },
  sem_trywait: { parameters: ["pointer"], result: "i32" },
  sem_post: { parameters: ["pointer"], result: "i32" },
  sem_destroy: { parameters: ["pointer"], result: "i32" },
} as const;

const PROT_READ = 1;
const PROT_WRITE = 2;
const PROT_EXEC = 4;
const MAP_PRIVATE = 2;
const MAP_ANONYMOUS = 0x20;
const PAGE = 4096;
const RTLD_LAZY = 1;
const RTLD_NOLOAD = 4;

/** The machine code's functions: C function pointers Triton can call from any thread. */
export interface NativeAllocator {
  /** TRITONSERVER_ResponseAllocatorAllocFn_t. */
  readonly alloc: Deno.PointerObject;
  /** TRITONSERVER_ResponseAllocatorReleaseFn_t. */
  readonly release: Deno.PointerObject;
  close(): void;
}

/** `value` as the 8 little-endian bytes of an x86-64 immediate. */
export function imm64(value: bigint): number[] {
  const bytes = new Uint8Array(new BigUint64Array([value]).buffer);
  return [...bytes];
}

/** `value` as the 4 little-endian bytes of an x86-64 immediate or displacement. */
export function imm32(value: number): number[] {
  return [...new Uint8Array(new Int32Array([value]).buffer)];
}

/**
 * perf_analyzer's error for an output larger than its region, as a printf
 * format: the output's name, the region's bytes, the bytes the output needs.
 */
export const OUTPUT_TOO_LARGE = "shared memory size specified with the request for output '%s' " +
  "(%zu bytes) should be at least %zu bytes to hold the results";

/** TRITONSERVER_ERROR_INTERNAL, the code perf_analyzer's allocator fails with. */
export const ERROR_INTERNAL = 1;
/** The message buffer on the stack (a multiple of 16: the stack stays aligned). */
const MESSAGE_BYTES = 512;

/** The addresses the allocator's code calls. */
export interface AllocatorCalls {
  malloc: bigint;
  free: bigint;
  strcmp: bigint;
  snprintf: bigint;
  /** TRITONSERVER_ErrorNew. */
  errorNew: bigint;
}

/**
 * The allocator's code (System V AMD64 calling convention).
 *
 * alloc(allocator, tensor_name, byte_size, memory_type, memory_type_id,
 *       userp, void** buffer, void** buffer_userp, memory_type* actual,
 *       int64* actual_id): the last four on the stack. Reports CPU memory
 * (*actual = 0, *actual_id = 0). A request's `userp` is null, or its output
 * regions (--shared-memory system): a u64 count, then per region the
 * addresses of its output's name and memory and its size (u64 each). An
 * output with a region is written there (*buffer_userp = 1: not freed), or
 * fails with perf_analyzer's error (TRITONSERVER_ErrorNew(INTERNAL, message))
 * when it does not fit; any other output gets
 * *buffer = byte_size ? malloc(byte_size) : NULL, *buffer_userp = NULL.
 *
 * release(allocator, buffer, buffer_userp, byte_size, memory_type,
 *         memory_type_id): free(buffer) unless buffer_userp says it is a
 * region; returns NULL.
 */
export function allocatorCode(calls: AllocatorCalls): { code: number[]; release: number } {
  const head = [
    [0x53], //                                    push rbx
    [0x41, 0x54], //                              push r12
    [0x41, 0x55], //                              push r13
    [0x41, 0x56], //                              push r14
    [0x41, 0x57], //                              push r15 (the stack is 16-byte aligned)
    [0x48, 0x8b, 0x5c, 0x24, 0x30], //            mov rbx, [rsp+48]      buffer
    [0x48, 0xc7, 0x03, 0, 0, 0, 0], //            mov qword [rbx], 0
    [0x48, 0x8b, 0x44, 0x24, 0x38], //            mov rax, [rsp+56]      buffer_userp
    [0x48, 0xc7, 0x00, 0, 0, 0, 0], //            mov qword [rax], 0
    [0x48, 0x8b, 0x44, 0x24, 0x40], //            mov rax, [rsp+64]      actual memory type
    [0xc7, 0x00, 0, 0, 0, 0], //                  mov dword [rax], 0     (CPU)
    [0x48, 0x8b, 0x44, 0x24, 0x48], //            mov rax, [rsp+72]      actual memory type id
    [0x48, 0xc7, 0x00, 0, 0, 0, 0], //            mov qword [rax], 0
    [0x48, 0x85, 0xd2], //                        test rdx, rdx          byte_size 0: no buffer
    [0x74, 0x63], //                              jz done
    [0x49, 0x89, 0xd4], //                        mov r12, rdx           byte_size
    [0x49, 0x89, 0xf5], //                        mov r13, rsi           tensor_name
    [0x4d, 0x85, 0xc9], //                        test r9, r9            no regions
    [0x74, 0x46], //                              jz heap
    [0x4d, 0x8b, 0x31], //                        mov r14, [r9]          count
    [0x4d, 0x8d, 0x79, 0x08], //                  lea r15, [r9+8]        first region
    [0x4d, 0x85, 0xf6], //                  find: test r14, r14
    [0x74, 0x3a], //                              jz heap                not a region's output
    [0x4c, 0x89, 0xef], //                        mov rdi, r13
    [0x49, 0x8b, 0x37], //                        mov rsi, [r15]         the region's output
    [0x48, 0xb8, ...imm64(calls.strcmp)], //      movabs rax, strcmp
    [0xff, 0xd0], //                              call rax
    [0x85, 0xc0], //                              test eax, eax
    [0x74, 0x09], //                              jz found
    [0x49, 0x83, 0xc7, 0x18], //                  add r15, 24
    [0x49, 0xff, 0xce], //                        dec r14
    [0xeb, 0xdc], //                              jmp find
    [0x4d, 0x3b, 0x67, 0x10], //           found: cmp r12, [r15+16]      byte_size > region size
    [0x77, 0x33], //                              ja small
    [0x49, 0x8b, 0x47, 0x08], //                  mov rax, [r15+8]
    [0x48, 0x89, 0x03], //                        mov [rbx], rax         *buffer = region
    [0x48, 0x8b, 0x44, 0x24, 0x38], //            mov rax, [rsp+56]
    [0x48, 0xc7, 0x00, 1, 0, 0, 0], //            mov qword [rax], 1     *buffer_userp: a region
    [0xeb, 0x12], //                              jmp done
    [0x4c, 0x89, 0xe7], //                  heap: mov rdi, r12
    [0x48, 0xb8, ...imm64(calls.malloc)], //      movabs rax, malloc
    [0xff, 0xd0], //                              call rax
    [0x48, 0x89, 0x03], //                        mov [rbx], rax
    [0x31, 0xc0], //                        done: xor eax, eax         no error
    [0x41, 0x5f], //                         out: pop r15
    [0x41, 0x5e], //                              pop r14
    [0x41, 0x5d], //                              pop r13
    [0x41, 0x5c], //                              pop r12
    [0x5b], //                                    pop rbx
    [0xc3], //                                    ret
    [0x48, 0x81, 0xec, ...imm32(MESSAGE_BYTES)], // small: sub rsp, MESSAGE_BYTES
    [0x48, 0x89, 0xe7], //                        mov rdi, rsp
    [0xbe, ...imm32(MESSAGE_BYTES)], //           mov esi, MESSAGE_BYTES
  ].flat();
  // lea rdx, [rip + format]: its displacement counts from the end of the instruction.
  const lea = [0x48, 0x8d, 0x15];
  const tail = [
    [0x4c, 0x89, 0xe9], //                        mov rcx, r13           name
    [0x4d, 0x8b, 0x47, 0x10], //                  mov r8, [r15+16]       region size
    [0x4d, 0x89, 0xe1], //                        mov r9, r12            byte_size
    [0x49, 0xbb, ...imm64(calls.snprintf)], //    movabs r11, snprintf
    [0x31, 0xc0], //                              xor eax, eax           no vector arguments
    [0x41, 0xff, 0xd3], //                        call r11
    [0xbf, ...imm32(ERROR_INTERNAL)], //          mov edi, INTERNAL
    [0x48, 0x89, 0xe6], //                        mov rsi, rsp           the message (copied)
    [0x48, 0xb8, ...imm64(calls.errorNew)], //    movabs rax, TRITONSERVER_ErrorNew
    [0xff, 0xd0], //                              call rax               the error is returned
    [0x48, 0x81, 0xc4, ...imm32(MESSAGE_BYTES)], // add rsp, MESSAGE_BYTES
    [0xeb, 0xaa], //                              jmp out
  ].flat();
  const release = [
    [0x48, 0x85, 0xd2], //                        test rdx, rdx          a region: not freed
    [0x75, 0x17], //                              jnz kept
    [0x48, 0x83, 0xec, 0x08], //                  sub rsp, 8             align the stack for the call
    [0x48, 0x89, 0xf7], //                        mov rdi, rsi           buffer
    [0x48, 0xb8, ...imm64(calls.free)], //        movabs rax, free
    [0xff, 0xd0], //                              call rax
    [0x48, 0x83, 0xc4, 0x08], //                  add rsp, 8
    [0x31, 0xc0], //                        kept: xor eax, eax         no error
    [0xc3], //                                    ret
  ].flat();
  const allocLength = head.length + lea.length + 4 + tail.length;
  // The release function starts on its own 16-byte boundary; the format follows it.
  const offset = Math.ceil(allocLength / 16) * 16;
  const format = offset + release.length;
  const alloc = [...head, ...lea, ...imm32(format - (head.length + lea.length + 4)), ...tail];
  return {
    code: [
      ...alloc,
      ...new Array(offset - allocLength).fill(0xcc),
      ...release,
      ...encoder.encode(`${OUTPUT_TOO_LARGE}\0`),
    ],
    release: offset,
  };
}

/** libc, and the page of generated code, where both can be had. */
export class NativeCode {
  readonly libc: Deno.DynamicLibrary<typeof LIBC_SYMBOLS>;
  #page: Deno.PointerObject | undefined;

  private constructor(libc: Deno.DynamicLibrary<typeof LIBC_SYMBOLS>) {
    this.libc = libc;
  }

  /** libc on x86-64 Linux, else undefined. */
  static open(): NativeCode | undefined {
    if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") return undefined;
    try {
      return new NativeCode(Deno.dlopen("libc.so.6", LIBC_SYMBOLS));
    } catch {
      return undefined;
    }
  }

  /** The address of a libc function, or 0n. */
  address(name: string): bigint {
    return this.#symbol(null, name);
  }

  /**
   * The address of a function of the library at `path`, which Deno has loaded
   * (privately: it is not among the process's global symbols), or 0n.
   */
  loadedAddress(path: string, name: string): bigint {
    const s = this.libc.symbols;
    const handle = s.dlopen(encoder.encode(`${path}\0`), RTLD_LAZY | RTLD_NOLOAD);
    if (handle === null) return 0n;
    const address = this.#symbol(handle, name);
    // Only the count this dlopen added: Deno's handle keeps the library loaded.
    s.dlclose(handle);
    return address;
  }

  #symbol(handle: Deno.PointerValue, name: string): bigint {
    const pointer = this.libc.symbols.dlsym(handle, encoder.encode(`${name}\0`));
    return pointer === null ? 0n : BigInt(Deno.UnsafePointer.value(pointer));
  }

  /** `code` in an executable page (never writable and executable at once), or undefined. */
  load(code: readonly number[]): Deno.PointerObject | undefined {
    const s = this.libc.symbols;
    if (code.length > PAGE) throw new RangeError(`Native code of ${code.length} bytes`);
    const page = s.mmap(
      null,
      BigInt(PAGE),
      PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS,
      -1,
      0n,
    );
    // mmap's failure is MAP_FAILED, (void*)-1.
    if (page === null || Deno.UnsafePointer.value(page) === 0xffffffffffffffffn) return undefined;
    new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(page, PAGE)).set(code);
    if (s.mprotect(page, BigInt(PAGE), PROT_READ | PROT_EXEC) !== 0) {
      s.munmap(page, BigInt(PAGE));
      return undefined;
    }
    this.#page = page;
    return page;
  }

  close(): void {
    if (this.#page !== undefined) this.libc.symbols.munmap(this.#page, BigInt(PAGE));
    this.#page = undefined;
    this.libc.close();
  }
}

/**
 * The native allocator, or undefined where it cannot be made (other machines,
 * a refused mapping). `errorNew` finds TRITONSERVER_ErrorNew.
 */
export function nativeAllocator(
  errorNew: (native: NativeCode) => bigint,
): NativeAllocator | undefined {
  const native = NativeCode.open();
  if (native === undefined) return undefined;
  const calls: AllocatorCalls = {
    malloc: native.address("malloc"),
    free: native.address("free"),
    strcmp: native.address("strcmp"),
    snprintf: native.address("snprintf"),
    errorNew: errorNew(native),
  };
  const found = Object.values(calls).every((address) => address !== 0n);
  const { code, release } = allocatorCode(calls);
  const page = found ? native.load(code) : undefined;
  if (page === undefined) {
    native.close();
    return undefined;
  }
  return {
    alloc: page,
    release: Deno.UnsafePointer.offset(page, release)!,
    close: () => native.close(),
  };
}
