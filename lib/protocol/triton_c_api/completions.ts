/**
 * How responses and request releases get from Triton's threads to
 * JavaScript.
 *
 * A thread-safe callback blocks the Triton thread that calls it until the
 * event loop has run it, so the model instance waits for JavaScript after
 * every response and more requests in flight give no more throughput
 * (BENCHMARKS.md, issue 19). On x86-64 Linux the two callbacks are instead
 * generated machine code (native.ts) that appends the call to a ring in
 * memory and posts a semaphore; a wait on that semaphore on Deno's blocking
 * pool wakes the event loop, which handles every call queued by then.
 * Triton's threads never wait for JavaScript. Elsewhere thread-safe
 * callbacks are used.
 */
import { REQUEST_RELEASE_FN, RESPONSE_COMPLETE_FN } from "./ffi.ts";
import { imm32, imm64, NativeCode } from "./native.ts";

/** What Triton's response-complete and request-release callbacks deliver. */
export interface CompletionHandlers {
  response(response: Deno.PointerValue, flags: number, userp: Deno.PointerValue): void;
  release(request: Deno.PointerValue, userp: Deno.PointerValue): void;
  /** Requests sent and not answered yet. */
  inflight(): number;
}

export interface Completions {
  /** TRITONSERVER_InferenceResponseCompleteFn_t. */
  readonly response: Deno.PointerObject;
  /** TRITONSERVER_InferenceRequestReleaseFn_t. */
  readonly release: Deno.PointerObject;
  /** After the server stopped calling: delivers what is queued, then frees everything. */
  close(): Promise<void>;
}

/** The native queue where it can be made, else thread-safe callbacks. */
export function createCompletions(handlers: CompletionHandlers): Completions {
  return nativeCompletions(handlers) ?? threadSafeCompletions(handlers);
}

function threadSafeCompletions(handlers: CompletionHandlers): Completions {
  // They keep the event loop alive until closed.
  const response = Deno.UnsafeCallback.threadSafe(
    RESPONSE_COMPLETE_FN,
    (pointer, flags, userp) => handlers.response(pointer, flags, userp),
  );
  const release = Deno.UnsafeCallback.threadSafe(
    REQUEST_RELEASE_FN,
    (request, _flags, userp) => handlers.release(request, userp),
  );
  return {
    response: response.pointer,
    release: release.pointer,
    close() {
      response.close();
      release.close();
      return Promise.resolve();
    },
  };
}

/**
 * The ring's memory: a u64 reservation counter at 0 (the code's `base`), the semaphore
 * (glibc's sem_t, 32 bytes) at SEM, then SLOTS slots of SLOT_BYTES:
 * pointer (u64), flags (u32), kind (u32: 0 response, 1 release), userp
 * (u64), and a sequence number (u64) that publishes the slot: n + 1 for the
 * n-th call, 0 once JavaScript has taken it.
 */
const SEM = 64;
const SLOTS_AT = 128;
const SLOT_BYTES = 32;
/**
 * More than the calls that can wait at once: each request in flight has one
 * release and its responses pending. When the ring is full a caller spins
 * until JavaScript frees its slot.
 */
const SLOTS = 1 << 16;
const KIND_RESPONSE = 0;
/**
 * How long the event loop polls the ring while requests are in flight before
 * it sleeps on the semaphore. Waking from the semaphore takes two thread
 * hand-offs (Deno's blocking pool, then the event loop), about as long as
 * the core takes to answer a small request, so at low concurrency a short
 * poll halves the time between a response and the next send.
 */
const POLL_MS = 0.2;

/**
 * The two callbacks' code (System V AMD64): each takes (pointer, u32 flags,
 * userp), appends them with its kind to the ring at `base` and tail-calls
 * sem_post on the ring's semaphore. `release` is the offset of the second.
 */
export function queueCode(base: bigint, semPost: bigint): { code: number[]; release: number } {
  const mask = SLOTS - 1;
  return {
    code: [
      0x41,
      0xba,
      0,
      0,
      0,
      0, //                     response: mov r10d, 0
      0xeb,
      0x06, //                                 jmp append
      0x41,
      0xba,
      1,
      0,
      0,
      0, //                     release: mov r10d, 1
      0x48,
      0xb9,
      ...imm64(base), //                 append: movabs rcx, base
      0xb8,
      1,
      0,
      0,
      0, //                           mov eax, 1
      0xf0,
      0x48,
      0x0f,
      0xc1,
      0x01, //               lock xadd [rcx], rax    n = head++
      0x49,
      0x89,
      0xc0, //                           mov r8, rax
      0x25,
      ...imm32(mask), //                       and eax, SLOTS - 1
      0x48,
      0xc1,
      0xe0,
      0x05, //                     shl rax, 5              * SLOT_BYTES
      0x4c,
      0x8d,
      0x8c,
      0x01,
      ...imm32(SLOTS_AT), // lea r9, [rcx + rax + SLOTS_AT]
      0x49,
      0x83,
      0x79,
      0x18,
      0x00, //               wait: cmp qword [r9+24], 0
      0x74,
      0x04, //                                 je free
      0xf3,
      0x90, //                                 pause                   ring full: spin
      0xeb,
      0xf5, //                                 jmp wait
      0x49,
      0x89,
      0x39, //                           free: mov [r9], rdi     pointer
      0x41,
      0x89,
      0x71,
      0x08, //                     mov [r9+8], esi         flags
      0x45,
      0x89,
      0x51,
      0x0c, //                     mov [r9+12], r10d       kind
      0x49,
      0x89,
      0x51,
      0x10, //                     mov [r9+16], rdx        userp
      0x49,
      0xff,
      0xc0, //                           inc r8
      0x4d,
      0x89,
      0x41,
      0x18, //                     mov [r9+24], r8         publish n + 1
      0x48,
      0x8d,
      0x79,
      SEM, //                      lea rdi, [rcx + SEM]
      0x48,
      0xb8,
      ...imm64(semPost), //              movabs rax, sem_post
      0xff,
      0xe0, //                                 jmp rax                 its return is ours
    ],
    release: 8,
  };
}

function nativeCompletions(handlers: CompletionHandlers): Completions | undefined {
  const native = NativeCode.open();
  if (native === undefined) return undefined;
  const memory = new ArrayBuffer(SLOTS_AT + SLOTS * SLOT_BYTES);
  const base = Deno.UnsafePointer.of(memory)!;
  const sem = Deno.UnsafePointer.offset(base, SEM)!;
  const semPost = native.address("sem_post");
  const s = native.libc.symbols;
  const { code, release } = queueCode(BigInt(Deno.UnsafePointer.value(base)), semPost);
  const page = semPost === 0n || s.sem_init(sem, 0, 0) !== 0 ? undefined : native.load(code);
  if (page === undefined) {
    native.close();
    return undefined;
  }
  // Read without BigInts: a drain allocates nothing but the pointer objects it hands on.
  const ints = new Int32Array(memory);
  const view = new Deno.UnsafePointerView(base);
  let taken = 0;
  let closed = false;
  /** Hands every published call to its handler, in order. */
  const drain = (): number => {
    let count = 0;
    for (;;) {
      const at = SLOTS_AT + (taken % SLOTS) * SLOT_BYTES;
      // The sequence number's low half, read atomically: the fields are read only after the
      // slot is seen published. Slots are reused every SLOTS calls, so the low half tells.
      const sequence = at / 4 + 6;
      if (Atomics.load(ints, sequence) !== ((taken + 1) | 0)) return count;
      const pointer = view.getPointer(at);
      const flags = view.getUint32(at + 8);
      const kind = view.getUint32(at + 12);
      const userp = view.getPointer(at + 16);
      // Freed: the high half first, so that a writer waiting on the whole word sees it zero.
      ints[sequence + 1] = 0;
      Atomics.store(ints, sequence, 0);
      taken++;
      count++;
      try {
        if (kind === KIND_RESPONSE) handlers.response(pointer, flags, userp);
        else handlers.release(pointer, userp);
      } catch (error) {
        // As a throwing thread-safe callback would: uncaught, without stopping the queue.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
  /** Polls for a posted call for up to POLL_MS, after the sends of the last drain went out. */
  const poll = async (): Promise<boolean> => {
    if (handlers.inflight() === 0) return false;
    await new Promise((resolve) => setImmediate(resolve));
    const until = performance.now() + POLL_MS;
    do {
      if (s.sem_trywait(sem) === 0) return true;
    } while (performance.now() < until && !closed);
    return false;
  };
  const loop = (async () => {
    while (!closed) {
      if (!await poll()) await s.sem_wait(sem);
      // Each call posted once: the calls taken beyond the first need not wake the loop again.
      for (let n = drain(); n > 1; n--) s.sem_trywait(sem);
    }
  })();
  // `memory` stays alive with `words` in the closures below, as long as Triton may write to it.
  return {
    response: page,
    release: Deno.UnsafePointer.offset(page, release)!,
    async close() {
      closed = true;
      s.sem_post(sem);
      await loop;
      drain();
      s.sem_destroy(sem);
      native.close();
    },
  };
}
