/**
 * --shared-memory system in process, as perf_analyzer's C API mode has it:
 * there is no shared-memory extension, so the regions are memory of this
 * process that never moves (ArrayBuffers), handed to the core by pointer.
 *
 * Inputs: each distinct tensor once, which every request reads in place.
 * Outputs: a region per output of each distinct request (the same inputs),
 * sized as perf_analyzer sizes them (outputSlotBytes in ../shm.ts). A
 * request carries its outputs' table as the response allocator's userp, and
 * the allocator (native.ts, allocator.ts) has the core write each output
 * into its region instead of allocating a buffer per response, or fails it
 * with perf_analyzer's error when it does not fit. Requests with the same
 * inputs share their output regions, as they do in Triton's regions over
 * HTTP and gRPC (../shm.ts): what concurrent requests write there is the
 * same, so each response's outputs read as its own.
 */
import { cString } from "./server.ts";

/**
 * A request's output regions as the allocator reads them: a u64 count, then
 * per region three u64: the address of its output's NUL-terminated name, of
 * its memory, and its size in bytes.
 */
export const TABLE_HEADER = 8;
export const TABLE_ENTRY = 24;

/** One distinct request's output regions; the table and everything it points to stay alive here. */
interface OutputTable {
  pointer: Deno.PointerObject;
  words: BigUint64Array;
  names: Uint8Array[];
  memory: ArrayBuffer[];
}

const address = (pointer: Deno.PointerValue) => BigInt(Deno.UnsafePointer.value(pointer));

export class ProcessRegions {
  /** The input regions, by the tensor data they hold. */
  readonly #inputs = new Map<Uint8Array, Uint8Array>();
  /** A number per input region, which names a distinct request's inputs. */
  readonly #ids = new Map<Uint8Array, number>();
  readonly #outputs = new Map<string, OutputTable>();

  /** The region holding `data` (made once per distinct tensor data). */
  input(data: Uint8Array): Uint8Array {
    let region = this.#inputs.get(data);
    if (region === undefined) this.#inputs.set(data, region = data.slice());
    return region;
  }

  /**
   * The output table of a request of `model` reading `inputs` (its input
   * regions): a region of `bytes(name)` for each of `outputs`, made once.
   */
  outputs(
    model: string,
    inputs: readonly Uint8Array[],
    options: { outputs: readonly string[]; bytes: (output: string) => number },
  ): Deno.PointerObject {
    const ids = inputs.map((region) => {
      let id = this.#ids.get(region);
      if (id === undefined) this.#ids.set(region, id = this.#ids.size);
      return id;
    });
    const key = `${model}\n${ids.join(",")}\n${options.outputs.join("\n")}`;
    let table = this.#outputs.get(key);
    if (table === undefined) this.#outputs.set(key, table = outputTable(options));
    return table.pointer;
  }
}

function outputTable(
  options: { outputs: readonly string[]; bytes: (output: string) => number },
): OutputTable {
  const { outputs } = options;
  const words = new BigUint64Array((TABLE_HEADER + TABLE_ENTRY * outputs.length) / 8);
  const names = outputs.map(cString);
  const memory = outputs.map((name) => new ArrayBuffer(options.bytes(name)));
  words[0] = BigInt(outputs.length);
  outputs.forEach((_, i) => {
    const at = (TABLE_HEADER + TABLE_ENTRY * i) / 8;
    words[at] = address(Deno.UnsafePointer.of(names[i]));
    words[at + 1] = address(Deno.UnsafePointer.of(memory[i]));
    words[at + 2] = BigInt(memory[i].byteLength);
  });
  return { pointer: Deno.UnsafePointer.of(words)!, words, names, memory };
}
