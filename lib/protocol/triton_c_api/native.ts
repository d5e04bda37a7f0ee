/**
 * Native callbacks for the in-process server, generated at run time.
 *
 * Triton calls the response allocator on its own thread and waits for the
 * buffer before the model computes; a JavaScript allocator turns that into a
 * blocking round trip to the event loop per output, which held inferperf to
 * a quarter of a C client's rate and made more requests in flight slower
 * (BENCHMARKS.md, issue 19). inferperf ships no native library, so on x86-64
 * Linux the allocator is a few dozen bytes of machine code written to an
 * executable mapping: allocate with libc's malloc, release with free, report
 * CPU memory. Elsewhere (or where the mapping is refused) the JavaScript
 * allocator is used.
 */

const LIBC_SYMBOLS = {
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  mprotect: { parameters: ["pointer", "usize", "i32"], result: "i32" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  dlsym: { parameters: ["pointer", "buffer"], result: "pointer" },
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

/**
 * The allocator's code (System V AMD64 calling convention).
 *
 * alloc(allocator, tensor_name, byte_size, memory_type, memory_type_id,
 *       userp, void** buffer, void** buffer_userp, memory_type* actual,
 *       int64* actual_id): the last four on the stack. Writes
 * *buffer = byte_size ? malloc(byte_size) : NULL, *buffer_userp = NULL,
 * *actual = CPU (0), *actual_id = 0; returns NULL (no error).
 *
 * release(allocator, buffer, buffer_userp, byte_size, memory_type,
 *         memory_type_id): free(buffer); returns NULL.
 */
export function allocatorCode(malloc: bigint, free: bigint): { code: number[]; release: number } {
  const alloc = [
    0x53, // push rbx (the stack is 16-byte aligned for the call)
    0x48,
    0x8b,
    0x5c,
    0x24,
    0x10, // mov rbx, [rsp+16]   buffer
    0x48,
    0x8b,
    0x44,
    0x24,
    0x18, // mov rax, [rsp+24]   buffer_userp
    0x48,
    0xc7,
    0x00,
    0,
    0,
    0,
    0, // mov qword [rax], 0
    0x48,
    0x8b,
    0x44,
    0x24,
    0x20, // mov rax, [rsp+32]   actual memory type
    0xc7,
    0x00,
    0,
    0,
    0,
    0, //       mov dword [rax], 0  (CPU)
    0x48,
    0x8b,
    0x44,
    0x24,
    0x28, // mov rax, [rsp+40]   actual memory type id
    0x48,
    0xc7,
    0x00,
    0,
    0,
    0,
    0, // mov qword [rax], 0
    0x31,
    0xc0, //                   xor eax, eax
    0x48,
    0x85,
    0xd2, //             test rdx, rdx       byte_size 0: no buffer
    0x74,
    0x0f, //                   jz store
    0x48,
    0x89,
    0xd7, //             mov rdi, rdx
    0x48,
    0xb8,
    ...imm64(malloc), // movabs rax, malloc
    0xff,
    0xd0, //                   call rax
    0x48,
    0x89,
    0x03, //             store: mov [rbx], rax
    0x31,
    0xc0, //                   xor eax, eax        no error
    0x5b, //                         pop rbx
    0xc3, //                         ret
  ];
  const release = [
    0x48,
    0x83,
    0xec,
    0x08, //       sub rsp, 8          align the stack for the call
    0x48,
    0x89,
    0xf7, //             mov rdi, rsi        buffer
    0x48,
    0xb8,
    ...imm64(free), //   movabs rax, free
    0xff,
    0xd0, //                   call rax
    0x31,
    0xc0, //                   xor eax, eax        no error
    0x48,
    0x83,
    0xc4,
    0x08, //       add rsp, 8
    0xc3, //                         ret
  ];
  // The release function starts on its own 16-byte boundary.
  const offset = Math.ceil(alloc.length / 16) * 16;
  return {
    code: [...alloc, ...new Array(offset - alloc.length).fill(0xcc), ...release],
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
    const pointer = this.libc.symbols.dlsym(null, new TextEncoder().encode(`${name}\0`));
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

/** The native allocator, or undefined where it cannot be made (other machines, a refused mapping). */
export function nativeAllocator(): NativeAllocator | undefined {
  const native = NativeCode.open();
  if (native === undefined) return undefined;
  const malloc = native.address("malloc");
  const free = native.address("free");
  const { code, release } = allocatorCode(malloc, free);
  const page = malloc === 0n || free === 0n ? undefined : native.load(code);
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
