/**
 * --service-kind triton_c_api: the load goes straight into Triton's core
 * library in this process (TRITONSERVER_ServerInferAsync), no network.
 *
 * Every send builds a TRITONSERVER_InferenceRequest from a prepared request
 * (a handful of fast FFI calls) and hands it to the server; responses and
 * the request's release come from Triton's threads through completions.ts.
 * A request is deleted only at its release: the core still owns it until
 * then (deleting it at the final response corrupts the next request).
 * Requests are prepared by _request.ts; output buffers come from the
 * allocator of allocator.ts, or are the regions of _regions.ts.
 */
import type { InferRequest, Tensor } from "../../types/tensor.ts";
import type { ModelInfo, ModelStatistics, ServerInfo } from "../../types/model.ts";
import type { RequestTiming } from "../../types/timing.ts";
import { InferError, TimeoutError } from "../errors.ts";
import { modelInfoFromJson, parseModelStatistics } from "../kserve_http.ts";
import {
  type InferenceClient,
  type InferOptions,
  type InferSession,
  type OutputTensors,
  type PreparedRequest,
  recordedOutputs,
  type StatisticsSource,
} from "../types.ts";
import {
  DATATYPE_CODES,
  DATATYPE_NAMES,
  PreparedCApiRequest,
  requestSettings,
  versionNumber,
} from "./_request.ts";
import { createAllocator, type ResponseAllocator } from "./allocator.ts";
import { type Completions, createCompletions } from "./completions.ts";
import { MEMORY_CPU, RESPONSE_COMPLETE_FINAL, type TritonLibrary } from "./ffi.ts";
import { ProcessRegions } from "./_regions.ts";
import {
  check,
  cString,
  InProcessServer,
  openTritonLibrary,
  takeError,
  tritonLibraryPath,
} from "./server.ts";
import { outputSlotBytes } from "../shm.ts";

/** How long a statistics read waits for answered requests to be released. */
const STATISTICS_WAIT_MS = 200;

export interface TritonCApiOptions {
  /** --triton-server-directory: lib/libtritonserver.so and backends/. */
  directory: string;
  /** --model-repository. */
  repository: string;
  /** -v: the server's own log on stderr. */
  verbose: boolean;
  /** --request-timeout: a request still unanswered after this fails. */
  requestTimeoutMs?: number;
  /**
   * --shared-memory system, as perf_analyzer's C API mode has it: in process
   * there is no shared-memory extension, so tensors live in regions of this
   * process's memory (_regions.ts; perf_analyzer: a region per tensor,
   * registered with its loader by pointer). Inputs are read in place, each
   * distinct tensor once (without the option each prepared request has its
   * own copy); outputs are written into regions sized from the model, -b and
   * --output-shared-memory-size (without it each response allocates them).
   */
  sharedMemory?: { batchSize: number; outputSharedMemorySize: number };
}

/** A model's outputs and the size of each one's region. */
interface OutputSizes {
  names: readonly string[];
  bytes: (output: string) => number;
}

/** A request in flight: what its responses settle. */
interface Call {
  timing: RequestTiming;
  decode: boolean;
  decoupled: boolean;
  onResponse: (() => void) | undefined;
  /** The export's note of each response's outputs (with decode only). */
  onOutputs: InferOptions["onOutputs"];
  /** The outputs asked for. */
  outputNames: readonly string[];
  resolve: (outputs: OutputTensors | undefined) => void;
  reject: (error: Error) => void;
  outputs: Tensor[] | undefined;
  /** Failed or timed out: later responses are only deleted. */
  settled: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Out-parameters of TRITONSERVER_InferenceResponseOutput, one 8-byte cell each. */
class OutputCells {
  readonly cells = new BigUint64Array(9);
  readonly name = this.cells.subarray(0, 1);
  readonly datatype = this.cells.subarray(1, 2);
  readonly shape = this.cells.subarray(2, 3);
  readonly dimCount = this.cells.subarray(3, 4);
  readonly base = this.cells.subarray(4, 5);
  readonly byteSize = this.cells.subarray(5, 6);
  readonly memoryType = this.cells.subarray(6, 7);
  readonly memoryTypeId = this.cells.subarray(7, 8);
  readonly userp = this.cells.subarray(8, 9);
}

function pointerAt(cell: BigUint64Array): Deno.PointerObject | null {
  return Deno.UnsafePointer.create(cell[0]);
}

export class TritonCApiClient implements InferenceClient, StatisticsSource {
  readonly protocol = "c_api" as const;
  readonly #lib: TritonLibrary;
  readonly #server: InProcessServer;
  readonly #allocator: ResponseAllocator;
  readonly #requestTimeoutMs: number | undefined;
  /** --shared-memory system: the regions, and the sizes of each loaded model's outputs. */
  readonly #regions: ProcessRegions | undefined;
  readonly #sharedMemory: TritonCApiOptions["sharedMemory"];
  readonly #outputSizes = new Map<string, OutputSizes>();
  readonly #completions: Completions;
  readonly #calls = new Map<number, Call>();
  /** Prepared requests whose tensors the core may still read, by call id, until released. */
  readonly #unreleased = new Map<number, PreparedCApiRequest>();
  /** Answered requests the core has not released yet: their statistics may still be pending. */
  readonly #answered = new Set<number>();
  #allReleased: PromiseWithResolvers<void> | undefined;
  readonly #loaded = new Set<string>();
  readonly #decoupled = new Set<string>();
  readonly #cell = new BigUint64Array(1);
  readonly #count = new Uint32Array(1);
  readonly #outputCells = new OutputCells();
  #nextId = 1;
  #closed: Promise<void> | undefined;

  private constructor(
    lib: TritonLibrary,
    server: InProcessServer,
    options: Pick<TritonCApiOptions, "requestTimeoutMs" | "sharedMemory"> & {
      allocator: ResponseAllocator;
    },
  ) {
    this.#lib = lib;
    this.#server = server;
    this.#allocator = options.allocator;
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#sharedMemory = options.sharedMemory;
    this.#regions = options.sharedMemory === undefined ? undefined : new ProcessRegions();
    this.#completions = createCompletions({
      response: (response, flags, userp) => this.#response(response, flags, userp),
      release: (request, userp) => this.#release(request, userp),
      inflight: () => this.#calls.size,
    });
  }

  /** Loads the library and starts the server on the model repository. */
  static async start(options: TritonCApiOptions): Promise<TritonCApiClient> {
    const lib = openTritonLibrary(options.directory);
    const server = await InProcessServer.start(lib, options);
    try {
      const allocator = createAllocator(lib, tritonLibraryPath(options.directory));
      return new TritonCApiClient(lib, server, {
        allocator,
        ...(options.sharedMemory === undefined ? {} : { sharedMemory: options.sharedMemory }),
        ...(options.requestTimeoutMs === undefined
          ? {}
          : { requestTimeoutMs: options.requestTimeoutMs }),
      });
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  serverInfo(): Promise<ServerInfo> {
    const metadata = this.#server.serverMetadata() as Record<string, unknown>;
    return Promise.resolve({
      name: typeof metadata.name === "string" ? metadata.name : "triton",
      version: typeof metadata.version === "string" ? metadata.version : "",
      extensions: Array.isArray(metadata.extensions) ? metadata.extensions.map(String) : [],
    });
  }

  /** Loads the model on first use (the server starts with none), then reads it. */
  async modelInfo(model: string, version: string): Promise<ModelInfo> {
    const number = versionNumber(version);
    if (!this.#loaded.has(model)) {
      await this.#server.loadModel(model, number);
      this.#loaded.add(model);
    }
    const info = modelInfoFromJson(
      this.#server.modelMetadata(model, number),
      this.#server.modelConfig(model, number),
      { model, version },
    );
    if (info.decoupled) this.#decoupled.add(model);
    const shared = this.#sharedMemory;
    if (shared !== undefined) {
      this.#outputSizes.set(model, {
        names: info.outputs.map((output) => output.name),
        bytes: outputSlotBytes(info, {
          batchSize: shared.batchSize,
          variableBytes: shared.outputSharedMemorySize,
        }),
      });
    }
    return info;
  }

  /**
   * The core counts a request in the statistics after its last response and
   * before releasing it: waiting for the release of every answered request
   * makes the counts match the client's.
   */
  async modelStatistics(model: string, version: string): Promise<ModelStatistics[]> {
    if (this.#answered.size > 0) {
      this.#allReleased ??= Promise.withResolvers<void>();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#allReleased.promise,
        new Promise((resolve) => timer = setTimeout(resolve, STATISTICS_WAIT_MS)),
      ]);
      clearTimeout(timer);
    }
    const stats = this.#server.modelStatistics(model, versionNumber(version)) as {
      model_stats?: unknown[];
    };
    return (stats.model_stats ?? []).map(parseModelStatistics);
  }

  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const regions = this.#regions;
    const inputs = request.inputs.map((tensor) => {
      const datatype = DATATYPE_CODES[tensor.datatype];
      // The core reads the bytes in place while the request runs: an ArrayBuffer never moves.
      const data = tensor.data.byteLength === 0
        ? tensor.data
        : regions?.input(tensor.data) ?? tensor.data.slice();
      return {
        name: cString(tensor.name),
        datatype,
        shape: BigInt64Array.from(tensor.shape, BigInt),
        data,
        pointer: data.byteLength === 0 ? null : Deno.UnsafePointer.of(data),
      };
    });
    return new PreparedCApiRequest({
      model: cString(target.model),
      version: BigInt(versionNumber(target.version)),
      inputs,
      outputs: request.outputs.map(cString),
      settings: requestSettings(request.parameters ?? {}),
      decoupled: this.#decoupled.has(target.model),
      outputNames: request.outputs,
      outputRegions: regions === undefined ? null : this.#outputTable(regions, {
        model: target.model,
        inputs: inputs.map((input) => input.data),
        outputs: request.outputs,
      }),
    });
  }

  /**
   * The output regions of a request: those of the outputs it asks for, or of
   * every output of the model (the core then answers with all of them).
   */
  #outputTable(
    regions: ProcessRegions,
    request: { model: string; inputs: readonly Uint8Array[]; outputs: readonly string[] },
  ): Deno.PointerObject {
    const sizes = this.#outputSizes.get(request.model);
    const outputs = request.outputs.length > 0 ? request.outputs : sizes?.names ?? [];
    // A model not read first has no sizes: every output gets --output-shared-memory-size.
    const bytes = sizes?.bytes ?? (() => this.#sharedMemory!.outputSharedMemorySize);
    return regions.outputs(request.model, request.inputs, { outputs, bytes });
  }

  openSession(): Promise<InferSession> {
    return Promise.resolve(new CApiSession(this));
  }

  /** Stops and deletes the server once every request in flight has finished. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      try {
        await this.#server.stop();
      } finally {
        await this.#completions.close();
        this.#allocator.close();
      }
    })();
    return this.#closed;
  }

  /** Sends `request`; resolves at its final response. */
  send(
    request: PreparedRequest,
    timing: RequestTiming,
    options: InferOptions | undefined,
  ): Promise<OutputTensors | undefined> {
    if (!(request instanceof PreparedCApiRequest)) {
      throw new TypeError("The request was not prepared by the C API client");
    }
    if (this.#closed !== undefined) throw new InferError("The in-process server is stopped", 0);
    const { promise, resolve, reject } = Promise.withResolvers<OutputTensors | undefined>();
    const id = this.#nextId++;
    const call: Call = {
      timing,
      decode: options?.decodeOutputs === true,
      decoupled: request.decoupled,
      onResponse: options?.onResponse,
      onOutputs: options?.decodeOutputs === true ? options.onOutputs : undefined,
      outputNames: request.outputNames,
      resolve,
      reject,
      outputs: undefined,
      settled: false,
      timer: undefined,
    };
    timing.start = performance.now();
    timing.responses = 0;
    const handle = this.#build(request, id);
    this.#calls.set(id, call);
    this.#unreleased.set(id, request);
    const error = this.#lib.symbols.TRITONSERVER_ServerInferAsync(
      this.#server.pointer,
      handle,
      null,
    );
    if (error !== null) {
      // Refused before the core took it: ours to delete, and no callback will come.
      this.#calls.delete(id);
      this.#unreleased.delete(id);
      this.#lib.symbols.TRITONSERVER_InferenceRequestDelete(handle);
      timing.end = performance.now();
      return Promise.reject(new InferError(takeError(this.#lib, error), 0));
    }
    timing.sendEnd = performance.now();
    if (this.#requestTimeoutMs !== undefined) {
      const ms = this.#requestTimeoutMs;
      call.timer = setTimeout(
        () => this.#fail(call, new TimeoutError(`No response within ${ms} ms`, ms)),
        ms,
      );
    }
    return promise;
  }

  /** A TRITONSERVER_InferenceRequest for `request`, its callbacks carrying `id`. */
  #build(request: PreparedCApiRequest, id: number): Deno.PointerObject {
    const lib = this.#lib;
    const s = lib.symbols;
    check(
      lib,
      s.TRITONSERVER_InferenceRequestNew(
        this.#cell,
        this.#server.pointer,
        request.model,
        request.version,
      ),
      "Creating an inference request",
    );
    const handle = pointerAt(this.#cell)!;
    try {
      for (const input of request.inputs) {
        check(
          lib,
          s.TRITONSERVER_InferenceRequestAddInput(
            handle,
            input.name,
            input.datatype,
            input.shape,
            BigInt(input.shape.length),
          ),
          "Adding an input",
        );
        if (input.pointer === null) continue;
        check(
          lib,
          s.TRITONSERVER_InferenceRequestAppendInputData(
            handle,
            input.name,
            input.pointer,
            BigInt(input.data.byteLength),
            MEMORY_CPU,
            0n,
          ),
          "Adding input data",
        );
      }
      for (const output of request.outputs) {
        check(lib, s.TRITONSERVER_InferenceRequestAddRequestedOutput(handle, output), "Output");
      }
      for (const setting of request.settings) check(lib, setting(lib, handle), "Request setting");
      const userp = Deno.UnsafePointer.create(BigInt(id));
      check(
        lib,
        s.TRITONSERVER_InferenceRequestSetReleaseCallback(handle, this.#completions.release, userp),
        "Setting the release callback",
      );
      check(
        lib,
        s.TRITONSERVER_InferenceRequestSetResponseCallback(
          handle,
          this.#allocator.pointer,
          request.outputRegions,
          this.#completions.response,
          userp,
        ),
        "Setting the response callback",
      );
    } catch (error) {
      s.TRITONSERVER_InferenceRequestDelete(handle);
      throw error;
    }
    return handle;
  }

  #response(response: Deno.PointerValue, flags: number, userp: Deno.PointerValue): void {
    const now = performance.now();
    const id = Number(Deno.UnsafePointer.value(userp));
    const call = this.#calls.get(id);
    if (response !== null) {
      if (call !== undefined && !call.settled) this.#read(call, response, now);
      this.#lib.symbols.TRITONSERVER_InferenceResponseDelete(response);
    } else if (call?.onOutputs !== undefined && !call.settled) {
      // perf_analyzer records the null response that ends a decoupled answer too.
      call.onOutputs(recordedOutputs(call.outputNames), now);
    }
    if ((flags & RESPONSE_COMPLETE_FINAL) === 0 || call === undefined) return;
    this.#calls.delete(id);
    if (this.#unreleased.has(id)) this.#answered.add(id);
    if (call.settled) return;
    call.settled = true;
    clearTimeout(call.timer);
    const timing = call.timing;
    timing.recvStart = now;
    if (timing.responses === 0) timing.firstResponse = now;
    timing.end = performance.now();
    call.resolve(call.decode ? call.outputs ?? [] : undefined);
  }

  /** One response of `call`: an error fails it; otherwise it is counted (and decoded). */
  #read(call: Call, response: Deno.PointerObject, now: number): void {
    const s = this.#lib.symbols;
    const error = s.TRITONSERVER_InferenceResponseError(response);
    if (error !== null) {
      call.timing.recvStart = now;
      this.#fail(call, new InferError(takeError(this.#lib, error), 0));
      return;
    }
    check(this.#lib, s.TRITONSERVER_InferenceResponseOutputCount(response, this.#count), "Outputs");
    const count = this.#count[0];
    if (count === 0 && call.decoupled) {
      // Not counted, but recorded by perf_analyzer as a response, each output "".
      call.onOutputs?.(recordedOutputs(call.outputNames), now);
      return;
    }
    const timing = call.timing;
    if (timing.responses === 0) timing.firstResponse = now;
    timing.responses++;
    if (call.decode) call.outputs = this.#outputs(response, count);
    call.onResponse?.();
    if (call.outputs !== undefined) {
      call.onOutputs?.(recordedOutputs(call.outputNames, call.outputs), now);
    }
  }

  #outputs(response: Deno.PointerObject, count: number): Tensor[] {
    const c = this.#outputCells;
    const tensors: Tensor[] = [];
    for (let i = 0; i < count; i++) {
      c.cells.fill(0n);
      check(
        this.#lib,
        this.#lib.symbols.TRITONSERVER_InferenceResponseOutput(
          response,
          i,
          c.name,
          c.datatype,
          c.shape,
          c.dimCount,
          c.base,
          c.byteSize,
          c.memoryType,
          c.memoryTypeId,
          c.userp,
        ),
        "Reading an output",
      );
      const dims = Number(c.dimCount[0]);
      const shapePointer = pointerAt(c.shape);
      const shape = dims === 0 || shapePointer === null ? [] : Array.from(
        new BigInt64Array(Deno.UnsafePointerView.getArrayBuffer(shapePointer, dims * 8)),
        Number,
      );
      const size = Number(c.byteSize[0]);
      const base = pointerAt(c.base);
      const data = size === 0 || base === null
        ? new Uint8Array(0)
        : new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(base, size)).slice();
      const code = Number(c.datatype[0] & 0xffffffffn);
      tensors.push({
        name: Deno.UnsafePointerView.getCString(pointerAt(c.name)!),
        datatype: DATATYPE_NAMES.get(code) ?? "BYTES",
        shape,
        data,
      });
    }
    return tensors;
  }

  #fail(call: Call, error: Error): void {
    if (call.settled) return;
    call.settled = true;
    clearTimeout(call.timer);
    call.timing.end = performance.now();
    call.reject(error);
  }

  #release(request: Deno.PointerValue, userp: Deno.PointerValue): void {
    const id = Number(Deno.UnsafePointer.value(userp));
    this.#unreleased.delete(id);
    if (this.#answered.delete(id) && this.#answered.size === 0) {
      this.#allReleased?.resolve();
      this.#allReleased = undefined;
    }
    const error = this.#lib.symbols.TRITONSERVER_InferenceRequestDelete(request);
    if (error !== null) takeError(this.#lib, error);
  }
}

/** A concurrency slot: the server takes any number of requests, so a session only forwards. */
class CApiSession implements InferSession {
  readonly #client: TritonCApiClient;

  constructor(client: TritonCApiClient) {
    this.#client = client;
  }

  infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    return this.#client.send(request, timing, options);
  }

  close(): void {}
}
