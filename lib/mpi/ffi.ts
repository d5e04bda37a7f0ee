/**
 * The system's MPI library through Deno FFI (--enable-mpi; needs
 * --allow-ffi): Open MPI's libmpi.so.40 or MPICH's libmpi.so.12 (and the
 * libraries sharing its ABI: Intel MPI, MVAPICH), or --mpi-library PATH.
 *
 * The two ABIs differ in their handles: Open MPI's MPI_COMM_WORLD, MPI_DOUBLE
 * or MPI_SUM are addresses of global symbols (ompi_mpi_comm_world, ...),
 * MPICH's are integer constants from its mpi.h. A first open reads which one
 * the library is; the second declares the functions with that handle type.
 *
 * Collectives are declared nonblocking: they run on a thread of Deno's pool,
 * so the event loop goes on sending the load while a rank waits for the
 * others. MPI is initialized with MPI_THREAD_SERIALIZED for that, and calls
 * are queued so that one at a time runs.
 */
import type { Communicator, ReduceOp } from "./communicator.ts";

/** Tried in order without --mpi-library. */
const DEFAULT_LIBRARIES: Record<string, readonly string[]> = {
  darwin: ["libmpi.40.dylib", "libmpi.12.dylib", "libmpi.dylib"],
  linux: ["libmpi.so.40", "libmpi.so.12", "libmpi.so"],
};

const MPI_THREAD_SERIALIZED = 2;
/** MPI_MAX_LIBRARY_VERSION_STRING of MPICH (Open MPI's is 256). */
const MAX_VERSION_LENGTH = 8192;

/** MPICH's mpi.h values (shared by Intel MPI and MVAPICH). */
const MPICH_HANDLES = {
  comm: 0x44000000,
  byte: 0x4c00010d,
  int: 0x4c000405,
  double: 0x4c00080b,
  max: 0x58000001,
  min: 0x58000002,
  sum: 0x58000003,
};

/** Environment variables that MPI launchers set in every rank (mpirun, mpiexec.hydra, srun). */
const LAUNCHER_VARIABLES = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"];

/** --enable-mpi could not start: no library, or not started by an MPI launcher. */
export class MpiError extends Error {
  override name = "MpiError";
}

type Handle = Deno.PointerValue | number;

/** The functions used, with the handle type of the library's ABI. */
interface MpiFunctions {
  MPI_Init_thread(argc: null, argv: null, required: number, provided: Int32Array): number;
  MPI_Comm_rank(comm: Handle, rank: Int32Array): number;
  MPI_Comm_size(comm: Handle, size: Int32Array): number;
  MPI_Barrier(comm: Handle): Promise<number>;
  MPI_Bcast(
    buffer: Uint8Array | Float64Array,
    count: number,
    type: Handle,
    root: number,
    comm: Handle,
  ): Promise<number>;
  MPI_Allreduce(
    send: Float64Array,
    recv: Float64Array,
    count: number,
    type: Handle,
    op: Handle,
    comm: Handle,
  ): Promise<number>;
  MPI_Gather(
    send: Int32Array,
    sendCount: number,
    sendType: Handle,
    recv: Int32Array | null,
    recvCount: number,
    recvType: Handle,
    root: number,
    comm: Handle,
  ): Promise<number>;
  MPI_Gatherv(
    send: Uint8Array,
    sendCount: number,
    sendType: Handle,
    recv: Uint8Array | null,
    recvCounts: Int32Array | null,
    displacements: Int32Array | null,
    recvType: Handle,
    root: number,
    comm: Handle,
  ): Promise<number>;
  MPI_Finalize(): number;
}

function declare(handle: "pointer" | "i32") {
  const blocking = { nonblocking: true } as const;
  return {
    MPI_Init_thread: { parameters: ["pointer", "pointer", "i32", "buffer"], result: "i32" },
    MPI_Comm_rank: { parameters: [handle, "buffer"], result: "i32" },
    MPI_Comm_size: { parameters: [handle, "buffer"], result: "i32" },
    MPI_Barrier: { parameters: [handle], result: "i32", ...blocking },
    MPI_Bcast: { parameters: ["buffer", "i32", handle, "i32", handle], result: "i32", ...blocking },
    MPI_Allreduce: {
      parameters: ["buffer", "buffer", "i32", handle, handle, handle],
      result: "i32",
      ...blocking,
    },
    MPI_Gather: {
      parameters: ["buffer", "i32", handle, "buffer", "i32", handle, "i32", handle],
      result: "i32",
      ...blocking,
    },
    MPI_Gatherv: {
      parameters: ["buffer", "i32", handle, "buffer", "buffer", "buffer", handle, "i32", handle],
      result: "i32",
      ...blocking,
    },
    MPI_Finalize: { parameters: [], result: "i32" },
  } as const;
}

/** The handles of Open MPI's ABI: addresses of its predefined objects. */
const OMPI_STATICS = {
  ompi_mpi_comm_world: { type: "pointer" },
  ompi_mpi_byte: { type: "pointer" },
  ompi_mpi_int: { type: "pointer" },
  ompi_mpi_double: { type: "pointer" },
  ompi_mpi_op_max: { type: "pointer" },
  ompi_mpi_op_min: { type: "pointer" },
  ompi_mpi_op_sum: { type: "pointer" },
} as const;

/** What the first open reads: the library's version and whether it has Open MPI's symbols. */
const PROBE = {
  MPI_Get_library_version: { parameters: ["buffer", "buffer"], result: "i32" },
  ompi_mpi_comm_world: { type: "pointer", optional: true },
  getenv: { parameters: ["buffer"], result: "pointer", optional: true },
} as const;

interface Probe {
  path: string;
  version: string;
  openMpi: boolean;
  /** Started by an MPI launcher, as far as its environment variables tell. */
  launched: boolean;
}

function cString(text: string): Uint8Array {
  return new TextEncoder().encode(text + "\0");
}

function probe(path: string): Probe {
  const lib = Deno.dlopen(path, PROBE);
  try {
    const buffer = new Uint8Array(MAX_VERSION_LENGTH);
    const length = new Int32Array(1);
    lib.symbols.MPI_Get_library_version(buffer, length);
    // Read through libc's getenv (reached from libmpi's dependencies): no --allow-env needed.
    const getenv = lib.symbols.getenv;
    return {
      path,
      version: new TextDecoder().decode(buffer.subarray(0, length[0])).trim(),
      openMpi: lib.symbols.ompi_mpi_comm_world !== null,
      launched: getenv === null ||
        LAUNCHER_VARIABLES.some((name) => getenv(cString(name)) !== null),
    };
  } finally {
    lib.close();
  }
}

/** The first library of `candidates` that opens, or an error saying what to install. */
function findLibrary(candidates: readonly string[], explicit: boolean): Probe {
  const failures: string[] = [];
  for (const path of candidates) {
    try {
      return probe(path);
    } catch (error) {
      // A refused --allow-ffi is the same for every candidate: main.ts names the flag.
      if (error instanceof Deno.errors.NotCapable) throw error;
      failures.push(`${path}: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  if (explicit) {
    throw new MpiError(`--mpi-library ${candidates[0]} can not be loaded (${failures[0]})`);
  }
  throw new MpiError(
    `--enable-mpi found no MPI library (tried ${candidates.join(", ")}): install Open MPI ` +
      "(Debian/Ubuntu: apt-get install openmpi-bin) or MPICH (libmpich12), or name it with " +
      "--mpi-library PATH",
  );
}

function check(code: number, what: string): void {
  if (code !== 0) throw new MpiError(`${what} failed with MPI error code ${code}`);
}

class LibraryCommunicator implements Communicator {
  readonly rank: number;
  readonly size: number;
  readonly library: string;
  readonly #fn: MpiFunctions;
  readonly #h: Record<keyof typeof MPICH_HANDLES, Handle>;
  readonly #close: () => void;
  /** The last queued call: MPI_THREAD_SERIALIZED allows one call at a time. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    fn: MpiFunctions,
    options: {
      handles: Record<keyof typeof MPICH_HANDLES, Handle>;
      library: string;
      close(): void;
    },
  ) {
    this.#fn = fn;
    this.#h = options.handles;
    this.library = options.library;
    this.#close = options.close;
    const provided = new Int32Array(1);
    check(fn.MPI_Init_thread(null, null, MPI_THREAD_SERIALIZED, provided), "MPI_Init_thread");
    if (provided[0] < MPI_THREAD_SERIALIZED) {
      throw new MpiError(
        `${options.library.split(",")[0]} offers thread level ${provided[0]}, but --enable-mpi ` +
          `needs MPI_THREAD_SERIALIZED (${MPI_THREAD_SERIALIZED})`,
      );
    }
    const out = new Int32Array(1);
    check(fn.MPI_Comm_rank(this.#h.comm, out), "MPI_Comm_rank");
    this.rank = out[0];
    check(fn.MPI_Comm_size(this.#h.comm, out), "MPI_Comm_size");
    this.size = out[0];
  }

  barrier(): Promise<void> {
    return this.#serial("MPI_Barrier", () => this.#fn.MPI_Barrier(this.#h.comm));
  }

  async broadcast(bytes: Uint8Array | undefined): Promise<Uint8Array> {
    const length = new Float64Array([bytes?.length ?? 0]);
    await this.#serial(
      "MPI_Bcast",
      () => this.#fn.MPI_Bcast(length, 1, this.#h.double, 0, this.#h.comm),
    );
    const data = this.rank === 0 ? bytes! : new Uint8Array(length[0]);
    await this.#serial(
      "MPI_Bcast",
      () => this.#fn.MPI_Bcast(data, data.length, this.#h.byte, 0, this.#h.comm),
    );
    return data;
  }

  async allreduce(values: Float64Array, op: ReduceOp): Promise<Float64Array> {
    const out = new Float64Array(values.length);
    await this.#serial(
      "MPI_Allreduce",
      () =>
        this.#fn.MPI_Allreduce(
          values,
          out,
          values.length,
          this.#h.double,
          this.#h[op],
          this.#h.comm,
        ),
    );
    return out;
  }

  async gather(bytes: Uint8Array): Promise<Uint8Array[] | undefined> {
    const root = this.rank === 0;
    const lengths = root ? new Int32Array(this.size) : null;
    const h = this.#h;
    await this.#serial(
      "MPI_Gather",
      () =>
        this.#fn.MPI_Gather(new Int32Array([bytes.length]), 1, h.int, lengths, 1, h.int, 0, h.comm),
    );
    let all: Uint8Array | null = null;
    let offsets: Int32Array | null = null;
    if (lengths) {
      offsets = new Int32Array(this.size);
      for (let i = 1; i < this.size; i++) offsets[i] = offsets[i - 1] + lengths[i - 1];
      all = new Uint8Array(offsets[this.size - 1] + lengths[this.size - 1]);
    }
    await this.#serial(
      "MPI_Gatherv",
      () =>
        this.#fn.MPI_Gatherv(bytes, bytes.length, h.byte, all, lengths, offsets, h.byte, 0, h.comm),
    );
    if (!all || !lengths || !offsets) return undefined;
    return Array.from(lengths, (n, i) => all.subarray(offsets[i], offsets[i] + n));
  }

  finalize(): void {
    check(this.#fn.MPI_Finalize(), "MPI_Finalize");
    this.#close();
  }

  #serial(what: string, call: () => Promise<number>): Promise<void> {
    const next = this.#queue.then(call).then((code) => check(code, what));
    this.#queue = next.catch(() => {});
    return next;
  }
}

/**
 * Loads the MPI library (`library`, else the usual names) and initializes
 * MPI. Throws MpiError with what to install or how to start the ranks.
 */
export function openMpi(options: { library?: string } = {}): Communicator {
  const candidates = options.library !== undefined
    ? [options.library]
    : DEFAULT_LIBRARIES[Deno.build.os] ?? DEFAULT_LIBRARIES.linux;
  const found = findLibrary(candidates, options.library !== undefined);
  if (!found.launched) {
    throw new MpiError(
      "--enable-mpi needs the ranks started by an MPI launcher: mpirun -n N inferperf " +
        "--enable-mpi ... (or srun --mpi=pmix under Slurm)",
    );
  }
  const library = found.version.split("\n")[0];
  if (found.openMpi) {
    const lib = Deno.dlopen(found.path, { ...declare("pointer"), ...OMPI_STATICS });
    const s = lib.symbols;
    return new LibraryCommunicator(s as unknown as MpiFunctions, {
      handles: {
        comm: s.ompi_mpi_comm_world,
        byte: s.ompi_mpi_byte,
        int: s.ompi_mpi_int,
        double: s.ompi_mpi_double,
        max: s.ompi_mpi_op_max,
        min: s.ompi_mpi_op_min,
        sum: s.ompi_mpi_op_sum,
      },
      library,
      close: () => lib.close(),
    });
  }
  const lib = Deno.dlopen(found.path, declare("i32"));
  return new LibraryCommunicator(lib.symbols as unknown as MpiFunctions, {
    handles: MPICH_HANDLES,
    library,
    close: () => lib.close(),
  });
}
