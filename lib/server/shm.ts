/**
 * System shared memory on the reference server (Triton's extension): regions
 * registered by name over POSIX shared-memory objects (files under /dev/shm),
 * read at every request that names them for an input and written for every
 * output requested into them: the very bytes the client wrote and reads.
 */
import { shmPath } from "../protocol/shm.ts";
import { ServerError } from "./errors.ts";

/** A registered region, as the status calls report it. */
export interface RegionStatus {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
}

/** A tensor's place in a region, from the shared_memory_* parameters. */
export interface RegionRef {
  region: string;
  offset: number;
  byteSize: number;
}

function invalid(message: string): ServerError {
  return new ServerError(message, "invalid_argument");
}

/**
 * The shared_memory_* parameters of a tensor (`what` names it), or undefined
 * when it has none. Values arrive as numbers (HTTP JSON, gRPC int64) or
 * bigints beyond 2^53.
 */
export function regionRef(
  parameters: Readonly<Record<string, unknown>>,
  what: string,
): RegionRef | undefined {
  const region = parameters.shared_memory_region;
  const size = parameters.shared_memory_byte_size;
  if (region === undefined && size === undefined) return undefined;
  if (typeof region !== "string" || size === undefined) {
    throw invalid(
      `${what}: shared_memory_region and shared_memory_byte_size must be given together`,
    );
  }
  const number = (value: unknown, name: string) => {
    const n = typeof value === "bigint" ? Number(value) : value;
    if (!Number.isSafeInteger(n) || (n as number) < 0) {
      throw invalid(`${what}: ${name} must be a non-negative integer`);
    }
    return n as number;
  };
  return {
    region,
    offset: number(parameters.shared_memory_offset ?? 0, "shared_memory_offset"),
    byteSize: number(size, "shared_memory_byte_size"),
  };
}

interface Region {
  status: RegionStatus;
  file: Deno.FsFile;
}

export class SharedMemoryRegistry {
  readonly #regions = new Map<string, Region>();
  readonly #directory: string | undefined;

  /** `directory`: where keys resolve instead of /dev/shm (tests). */
  constructor(options: { directory?: string } = {}) {
    this.#directory = options.directory;
  }

  register(status: RegionStatus): void {
    if (this.#regions.has(status.name)) {
      throw invalid(`shared memory region '${status.name}' already in manager`);
    }
    const path = shmPath(status.key, this.#directory);
    if (path === undefined) throw invalid(`Invalid shared memory key '${status.key}'`);
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true, write: true });
    } catch (error) {
      // Triton's words and status; Deno's refusal is this server's own, so it says why.
      throw new ServerError(
        `Unable to open shared memory region: '${status.key}'` +
          (error instanceof Deno.errors.NotCapable
            ? ": the server needs --allow-all, without which Deno denies access to /dev/shm"
            : ""),
        "internal",
      );
    }
    const size = file.statSync().size;
    if (status.offset + status.byteSize > size) {
      file.close();
      throw invalid(
        `shared memory region '${status.name}' (offset ${status.offset}, ${status.byteSize} ` +
          `bytes) exceeds the ${size} bytes of '${status.key}'`,
      );
    }
    this.#regions.set(status.name, { status: { ...status }, file });
  }

  /** Unregisters one region, or every region when `name` is "". Unknown names are ignored. */
  unregister(name: string): void {
    for (const [key, region] of this.#regions) {
      if (name !== "" && key !== name) continue;
      region.file.close();
      this.#regions.delete(key);
    }
  }

  /** Every region, or the one named; an unknown name is not_found. */
  status(name = ""): RegionStatus[] {
    if (name === "") return [...this.#regions.values()].map((r) => ({ ...r.status }));
    const region = this.#regions.get(name);
    if (region === undefined) {
      throw new ServerError(`Unable to find system shared memory region: '${name}'`, "not_found");
    }
    return [{ ...region.status }];
  }

  /** A copy of the bytes of an input placed at `ref`. */
  read(ref: RegionRef, what: string): Uint8Array {
    const { file, offset } = this.#locate(ref, what);
    const data = new Uint8Array(ref.byteSize);
    file.seekSync(offset, Deno.SeekMode.Start);
    let filled = 0;
    while (filled < data.length) {
      const n = file.readSync(data.subarray(filled));
      if (n === null) throw invalid(`${what}: shared memory region ended early`);
      filled += n;
    }
    return data;
  }

  /** Writes an output to `ref`, which must be large enough. */
  write(ref: RegionRef, data: Uint8Array, what: string): void {
    if (data.byteLength > ref.byteSize) {
      // An internal error in Triton too: the request was valid until the outputs came.
      throw new ServerError(
        `shared memory size specified with the request for ${what} (${ref.byteSize} bytes) ` +
          `should be at least ${data.byteLength} bytes to hold the results`,
        "internal",
      );
    }
    const { file, offset } = this.#locate(ref, what);
    file.seekSync(offset, Deno.SeekMode.Start);
    let written = 0;
    while (written < data.byteLength) written += file.writeSync(data.subarray(written));
  }

  close(): void {
    this.unregister("");
  }

  #locate(ref: RegionRef, what: string): { file: Deno.FsFile; offset: number } {
    const region = this.#regions.get(ref.region);
    if (region === undefined) {
      throw new ServerError(`Unable to find shared memory region: '${ref.region}'`, "not_found");
    }
    if (ref.offset + ref.byteSize > region.status.byteSize) {
      throw invalid(
        `${what}: offset ${ref.offset} + ${ref.byteSize} bytes exceeds the ` +
          `${region.status.byteSize} bytes of shared memory region '${ref.region}'`,
      );
    }
    return { file: region.file, offset: region.status.offset + ref.offset };
  }
}
