/**
 * System shared memory (Triton's extension, `--shared-memory system`), client
 * side: the input tensors of a run are written once into a POSIX
 * shared-memory object (a file under /dev/shm on Linux), each request
 * reserves an output slot in a second one, both are registered with the
 * server as regions, and requests name region, offset and size instead of
 * carrying bytes. Outputs are read back from their slots only when a caller
 * decodes them (validation, export), as perf_analyzer does.
 *
 * The objects are removed by release(), and by an "unload" listener when the
 * process exits first (a second Ctrl-C ends it with Deno.exit).
 */
import { decodeBytesElements } from "../input/codec.ts";
import { type Datatype, elementCount, elementSize } from "../types/datatype.ts";
import type { InferenceClient } from "./types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { ModelInfo } from "../types/model.ts";

/** Where POSIX shared-memory objects live on Linux. */
export const SHM_DIRECTORY = "/dev/shm";

/**
 * The bytes of each output's slot (or region, in process), as perf_analyzer
 * sizes them: a fixed-size output's batch-1 size from the model times the
 * batch size; outputs of variable size (a -1 dim, BYTES) take
 * --output-shared-memory-size per batch element instead.
 */
export function outputSlotBytes(
  model: Pick<ModelInfo, "outputs" | "maxBatchSize">,
  options: { batchSize: number; variableBytes: number },
): (output: string) => number {
  const batch = model.maxBatchSize > 0 ? options.batchSize : 1;
  const sizes = new Map(model.outputs.map((spec) => {
    const fixed = elementSize(spec.datatype) > 0 && !spec.dims.includes(-1);
    const bytes = fixed
      ? elementSize(spec.datatype) * elementCount(spec.dims)
      : options.variableBytes;
    return [spec.name, bytes * batch];
  }));
  return (output) => sizes.get(output) ?? options.variableBytes * batch;
}

/** A tensor's place in a registered region. */
export interface SharedMemoryRef {
  region: string;
  offset: number;
  byteSize: number;
}

/** Where a request's tensors live: one reference per input and per requested output. */
export interface SharedMemoryPlacement {
  /** Aligned with the request's `inputs`. */
  inputs: readonly SharedMemoryRef[];
  /** Aligned with the request's `outputs`. */
  outputs: readonly SharedMemoryRef[];
  /** The bytes of an output the server wrote to its slot (`shape` from the response). */
  readOutput(
    ref: SharedMemoryRef,
    tensor: { datatype: Datatype; shape: readonly number[] },
  ): Uint8Array;
}

/**
 * A request whose tensors travel through shared memory. Its `inputs` keep
 * their data (exports show it); clients send the references instead.
 */
export interface SharedMemoryRequest extends InferRequest {
  sharedMemory: SharedMemoryPlacement;
}

/** The shared-memory placement of a request, if it has one. */
export function placementOf(request: InferRequest): SharedMemoryPlacement | undefined {
  return (request as Partial<SharedMemoryRequest>).sharedMemory;
}

/** Triton's parameters naming a tensor's place, as inputs and requested outputs carry them. */
export function refParameters(ref: SharedMemoryRef): Record<string, string | number> {
  const parameters: Record<string, string | number> = {
    shared_memory_region: ref.region,
    shared_memory_byte_size: ref.byteSize,
  };
  if (ref.offset !== 0) parameters.shared_memory_offset = ref.offset;
  return parameters;
}

/** A region as the server registers it: `key` names the shared-memory object. */
export interface SharedMemoryRegion {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
}

/** Optional client ability: the system shared-memory extension's registration calls. */
export interface SharedMemoryControl {
  registerSystemSharedMemory(region: SharedMemoryRegion): Promise<void>;
  /** Unregisters one region ("" unregisters every region). */
  unregisterSystemSharedMemory(name: string): Promise<void>;
}

export function hasSharedMemoryControl(
  client: InferenceClient,
): client is InferenceClient & SharedMemoryControl {
  return typeof (client as Partial<SharedMemoryControl>).registerSystemSharedMemory === "function";
}

/**
 * The file of a shared-memory key ("/name" -> /dev/shm/name); undefined for
 * keys that are not one name. `directory` replaces /dev/shm in tests, which
 * Deno lets only --allow-all programs reach.
 */
export function shmPath(key: string, directory = SHM_DIRECTORY): string | undefined {
  const name = key.startsWith("/") ? key.slice(1) : key;
  if (name === "" || name.includes("/") || name === "." || name === "..") return undefined;
  return `${directory}/${name}`;
}

/** Tensor data starts at multiples of this, as allocators align device buffers. */
const ALIGNMENT = 64;
const align = (n: number) => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

let created = 0;

function readAt(file: Deno.FsFile, offset: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  file.seekSync(offset, Deno.SeekMode.Start);
  let filled = 0;
  while (filled < length) {
    const n = file.readSync(out.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return out.subarray(0, filled);
}

/** The first `count` BYTES elements of `data` (length prefix included). */
function bytesPrefix(data: Uint8Array, count: number): Uint8Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  for (let i = 0; i < count && offset + 4 <= data.byteLength; i++) {
    offset += 4 + view.getUint32(offset, true);
  }
  const out = data.subarray(0, Math.min(offset, data.byteLength));
  // Validates the elements, so a slot the server did not fill reads as an error, not as data.
  decodeBytesElements(out);
  return out;
}

/**
 * The shared-memory objects of one run: the inputs of every request written
 * once (identical tensor data shared), and an output slot of
 * `outputByteSize(name)` bytes per requested output of each distinct request
 * (sparse until the server writes).
 */
export class SystemSharedMemory {
  readonly regions: readonly SharedMemoryRegion[];
  readonly #input: SharedMemoryRegion;
  readonly #output: SharedMemoryRegion;
  readonly #outputByteSize: (output: string) => number;
  readonly #paths: string[];
  /** Where each distinct tensor data lives in the input object. */
  readonly #offsets = new Map<Uint8Array, number>();
  /** Where the output slots of each distinct request start, by its inputs' offsets. */
  readonly #slots = new Map<string, number>();
  readonly #readOutput = this.#read.bind(this);
  #outputFile: Deno.FsFile | undefined;
  #registered: SharedMemoryRegion[] = [];
  readonly #onUnload = (): void => this.#remove();

  /**
   * Creates the objects for `requests` (every request a run may send, or
   * requests with the same tensor data); throws a TypeError naming the
   * problem when /dev/shm can not take them.
   */
  constructor(
    requests: readonly InferRequest[],
    options: { outputByteSize: (output: string) => number; directory?: string },
  ) {
    const id = `inferperf_${Deno.pid}_${++created}`;
    let inputBytes = 0;
    let outputBytes = 0;
    for (const request of requests) {
      for (const t of request.inputs) {
        if (this.#offsets.has(t.data)) continue;
        this.#offsets.set(t.data, inputBytes);
        inputBytes = align(inputBytes + t.data.byteLength);
      }
      const key = this.#key(request)!;
      if (!this.#slots.has(key)) {
        this.#slots.set(key, outputBytes);
        for (const name of request.outputs) {
          outputBytes = align(outputBytes + options.outputByteSize(name));
        }
      }
    }
    this.#outputByteSize = options.outputByteSize;
    this.#input = {
      name: `${id}_input`,
      key: `/${id}_input`,
      offset: 0,
      byteSize: inputBytes || 1,
    };
    this.#output = {
      name: `${id}_output`,
      key: `/${id}_output`,
      offset: 0,
      byteSize: outputBytes || 1,
    };
    this.regions = [this.#input, this.#output];
    this.#paths = [this.#input.key, this.#output.key].map((key) =>
      shmPath(key, options.directory)!
    );
    globalThis.addEventListener("unload", this.#onUnload);
    try {
      const data = new Uint8Array(this.#input.byteSize);
      for (const [bytes, offset] of this.#offsets) data.set(bytes, offset);
      Deno.writeFileSync(this.#paths[0], data, { mode: 0o600 });
      this.#outputFile = Deno.openSync(this.#paths[1], {
        read: true,
        write: true,
        create: true,
        truncate: true,
        mode: 0o600,
      });
      this.#outputFile.truncateSync(this.#output.byteSize);
    } catch (error) {
      this.#remove();
      throw new TypeError(
        error instanceof Deno.errors.NotCapable
          ? `--shared-memory system needs --allow-all: Deno grants access to ${SHM_DIRECTORY} ` +
            "only with it (denoland/deno#30979)"
          : `Cannot create shared memory under ${SHM_DIRECTORY} (--shared-memory system needs ` +
            `POSIX shared memory, as on Linux): ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * `request` with its placement, found by its tensor data: any request built
   * from the same data as one given to the constructor has one. Others are
   * returned as they are (their tensors travel in the request).
   */
  place(request: InferRequest): InferRequest {
    const key = this.#key(request);
    const start = key === undefined ? undefined : this.#slots.get(key);
    if (start === undefined) return request;
    let offset = start;
    const sharedMemory: SharedMemoryPlacement = {
      inputs: request.inputs.map((t) => ({
        region: this.#input.name,
        offset: this.#offsets.get(t.data)!,
        byteSize: t.data.byteLength,
      })),
      outputs: request.outputs.map((name) => {
        const byteSize = this.#outputByteSize(name);
        const ref = { region: this.#output.name, offset, byteSize };
        offset = align(offset + byteSize);
        return ref;
      }),
      readOutput: this.#readOutput,
    };
    return { ...request, sharedMemory } as SharedMemoryRequest;
  }

  /** Registers the regions with the server. */
  async register(client: SharedMemoryControl): Promise<void> {
    for (const region of this.regions) {
      await client.registerSystemSharedMemory(region);
      this.#registered.push(region);
    }
  }

  /**
   * Unregisters the regions (best effort: the server may be gone) and removes
   * the objects. Idempotent.
   */
  async release(client: SharedMemoryControl): Promise<void> {
    const registered = this.#registered;
    this.#registered = [];
    for (const region of registered) {
      try {
        await client.unregisterSystemSharedMemory(region.name);
      } catch {
        // The server went away or restarted: nothing is left to unregister there.
      }
    }
    this.#remove();
  }

  /** The request's inputs' places in the input object; undefined when one is not there. */
  #key(request: InferRequest): string | undefined {
    let key = "";
    for (const t of request.inputs) {
      const offset = this.#offsets.get(t.data);
      if (offset === undefined) return undefined;
      key += `${offset},`;
    }
    return key;
  }

  #read(
    ref: SharedMemoryRef,
    tensor: { datatype: Datatype; shape: readonly number[] },
  ): Uint8Array {
    const file = this.#outputFile;
    if (file === undefined) throw new TypeError("The shared memory was released");
    const size = elementSize(tensor.datatype);
    const count = elementCount(tensor.shape);
    if (size === 0) return bytesPrefix(readAt(file, ref.offset, ref.byteSize), count).slice();
    return readAt(file, ref.offset, Math.min(ref.byteSize, size * count));
  }

  /** Synchronous, so that the unload listener can run it as the process exits. */
  #remove(): void {
    globalThis.removeEventListener("unload", this.#onUnload);
    try {
      this.#outputFile?.close();
    } catch {
      // Already closed.
    }
    this.#outputFile = undefined;
    for (const path of this.#paths ?? []) {
      try {
        Deno.removeSync(path);
      } catch {
        // Never created, or removed already.
      }
    }
  }
}

/** Reads a response's output from its shared-memory slot; undefined for outputs not placed there. */
export type SharedOutputReader = (
  output: { name: string; datatype: Datatype; shape: readonly number[] },
) => Uint8Array | undefined;

/** The reader of a placed request's outputs, by output name; undefined for other requests. */
export function sharedOutputReader(request: InferRequest): SharedOutputReader | undefined {
  const placement = placementOf(request);
  if (placement === undefined) return undefined;
  const refs = new Map(request.outputs.map((name, i) => [name, placement.outputs[i]]));
  return (output) => {
    const ref = refs.get(output.name);
    return ref === undefined ? undefined : placement.readOutput(ref, output);
  };
}
