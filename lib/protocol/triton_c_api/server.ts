/**
 * Triton's core library loaded into this process (--service-kind
 * triton_c_api): opening DIR/lib/libtritonserver.so, starting a server on a
 * model repository with the backends of DIR/backends, loading the profiled
 * model, and the JSON documents the API hands out (metadata, configuration,
 * statistics), which are those of Triton's HTTP endpoints.
 */
import { UsageError } from "../../types/errors.ts";
import { ConnectionError, InferError } from "../errors.ts";
import { MODEL_CONTROL_EXPLICIT, TRITON_SYMBOLS, type TritonLibrary } from "./ffi.ts";

/*
 * Errors, as main.ts maps them to exit codes: what the user fixes on the
 * command line or the machine (FFI permission, paths, a system library) is a
 * UsageError (1); a server that does not start is a ConnectionError, the
 * in-process form of an unreachable server (3); a model the server refuses to
 * load is an InferError, as over HTTP and gRPC (99).
 */

/** A setup problem the user fixes (permission, path, system library): one line. */
function setupError(message: string): UsageError {
  return new UsageError([message]);
}

const encoder = new TextEncoder();

/** A NUL-terminated copy of `text` for `const char*` parameters. */
export function cString(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${text}\0`);
}

/**
 * Debian 12 packages of the system libraries libtritonserver.so links
 * against (its README's runtime needs), named when the loader cannot find
 * one.
 */
const DEBIAN_PACKAGES: Record<string, string> = {
  "libprotobuf.so.32": "libprotobuf32",
  "libnuma.so.1": "libnuma1",
  "libre2.so.9": "libre2-9",
  "libssl.so.3": "libssl3",
  "libcrypto.so.3": "libssl3",
  "libb64.so.0d": "libb64-0d",
};

/** TRITONSERVER_Error* to its message; the error object is deleted. */
export function takeError(lib: TritonLibrary, error: Deno.PointerObject): string {
  const text = Deno.UnsafePointerView.getCString(lib.symbols.TRITONSERVER_ErrorMessage(error)!);
  lib.symbols.TRITONSERVER_ErrorDelete(error);
  return text;
}

/** Throws the message of a TRITONSERVER_Error*, prefixed with what failed. */
export function check(lib: TritonLibrary, error: Deno.PointerValue, what: string): void {
  if (error !== null) throw new InferError(`${what}: ${takeError(lib, error)}`, 0);
}

/** `DIR/lib/libtritonserver.so` of --triton-server-directory DIR. */
export function tritonLibraryPath(directory: string): string {
  return `${directory.replace(/\/+$/, "")}/lib/libtritonserver.so`;
}

/** The library at `DIR/lib/libtritonserver.so`, with one-line errors for what users get wrong. */
export function openTritonLibrary(directory: string): TritonLibrary {
  const path = tritonLibraryPath(directory);
  const ffi = Deno.permissions.querySync({ name: "ffi", path });
  if (ffi.state !== "granted") {
    throw setupError(
      `--service-kind triton_c_api loads ${path} into this process, which needs Deno's ` +
        "--allow-ffi permission: run with --allow-ffi",
    );
  }
  try {
    Deno.statSync(path);
  } catch (error) {
    // A refused read is main.ts's to report (it names the --allow-read grant).
    if (error instanceof Deno.errors.NotCapable) throw error;
    throw setupError(
      `--triton-server-directory ${directory}: no lib/libtritonserver.so there (expected ${path})`,
    );
  }
  try {
    return Deno.dlopen(path, TRITON_SYMBOLS);
  } catch (error) {
    throw setupError(describeLoadError(path, (error as Error).message));
  }
}

/** The loader's complaint about `path` as one line; a missing dependency names its package. */
export function describeLoadError(path: string, message: string): string {
  const missing = /([\w.+-]+\.so[\w.]*): cannot open shared object file/.exec(message)?.[1];
  if (missing === undefined || path.endsWith(`/${missing}`)) {
    return `Could not load ${path}: ${message.split("\n")[0]}`;
  }
  const known = DEBIAN_PACKAGES[missing];
  return `${path} needs the system library ${missing}, which is not installed` +
    (known ? ` (Debian/Ubuntu: apt-get install ${known})` : "");
}

export interface StartOptions {
  /** --triton-server-directory: backends come from its backends/ directory. */
  directory: string;
  /** --model-repository. */
  repository: string;
  /** -v: the server's info log on stderr. */
  verbose: boolean;
}

/** Out-parameter cells for the calls that return a pointer or a flag. */
class Cells {
  readonly pointer = new BigUint64Array(1);
  readonly flag = new Uint8Array(1);
  readonly bytes = new BigUint64Array(1);

  takePointer(): Deno.PointerObject {
    return Deno.UnsafePointer.create(this.pointer[0])!;
  }
}

/** A started in-process server. `stop()` stops and deletes it. */
export class InProcessServer {
  readonly #lib: TritonLibrary;
  readonly #server: Deno.PointerObject;
  readonly #cells = new Cells();
  #stopped = false;

  private constructor(lib: TritonLibrary, server: Deno.PointerObject) {
    this.#lib = lib;
    this.#server = server;
  }

  get pointer(): Deno.PointerObject {
    return this.#server;
  }

  /**
   * Starts a server on the repository. Models load on request (explicit
   * model control), so one broken model elsewhere in the repository does
   * not stop the run and a failing load reports the server's own message.
   */
  static async start(lib: TritonLibrary, options: StartOptions): Promise<InProcessServer> {
    const { directory, repository } = options;
    for (
      const [flag, path] of [["--model-repository", repository], [
        "--triton-server-directory",
        `${directory}/backends`,
      ]]
    ) {
      let isDirectory = false;
      try {
        isDirectory = Deno.statSync(path).isDirectory;
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) throw error;
        // Otherwise reported below.
      }
      if (!isDirectory) throw setupError(`${flag}: ${path} is not a directory`);
    }
    const s = lib.symbols;
    const cells = new Cells();
    check(lib, s.TRITONSERVER_ServerOptionsNew(cells.pointer), "Creating server options");
    const opts = cells.takePointer();
    try {
      const set = (error: Deno.PointerValue, what: string) => check(lib, error, what);
      set(
        s.TRITONSERVER_ServerOptionsSetModelRepositoryPath(opts, cString(repository)),
        "Setting the model repository",
      );
      set(
        s.TRITONSERVER_ServerOptionsSetBackendDirectory(opts, cString(`${directory}/backends`)),
        "Setting the backend directory",
      );
      set(
        s.TRITONSERVER_ServerOptionsSetRepoAgentDirectory(opts, cString(`${directory}/repoagents`)),
        "Setting the repository agent directory",
      );
      set(
        s.TRITONSERVER_ServerOptionsSetModelControlMode(opts, MODEL_CONTROL_EXPLICIT),
        "Setting the model control mode",
      );
      set(s.TRITONSERVER_ServerOptionsSetStrictModelConfig(opts, true), "Setting strict config");
      set(s.TRITONSERVER_ServerOptionsSetLogInfo(opts, options.verbose), "Setting the info log");
      // The server's warnings would interleave with the report; its errors come back as messages.
      set(s.TRITONSERVER_ServerOptionsSetLogWarn(opts, options.verbose), "Setting the warn log");
      set(s.TRITONSERVER_ServerOptionsSetLogError(opts, options.verbose), "Setting the error log");
      const error = await s.TRITONSERVER_ServerNew(cells.pointer, opts);
      if (error !== null) {
        throw new ConnectionError(`Triton did not start: ${takeError(lib, error)}`, repository);
      }
    } finally {
      s.TRITONSERVER_ServerOptionsDelete(opts);
    }
    const server = new InProcessServer(lib, cells.takePointer());
    if (!server.#isLive()) {
      await server.stop();
      throw new ConnectionError("The in-process Triton server started but is not live", repository);
    }
    return server;
  }

  #isLive(): boolean {
    const s = this.#lib.symbols;
    check(this.#lib, s.TRITONSERVER_ServerIsLive(this.#server, this.#cells.flag), "ServerIsLive");
    if (this.#cells.flag[0] === 0) return false;
    check(this.#lib, s.TRITONSERVER_ServerIsReady(this.#server, this.#cells.flag), "ServerIsReady");
    return this.#cells.flag[0] !== 0;
  }

  /** Loads `model` (all its versions the version policy names) and waits until it is ready. */
  async loadModel(model: string, version: number): Promise<void> {
    const s = this.#lib.symbols;
    const error = await s.TRITONSERVER_ServerLoadModel(this.#server, cString(model));
    if (error !== null) {
      throw new InferError(`Model "${model}" failed to load: ${takeError(this.#lib, error)}`, 0);
    }
    const ready = s.TRITONSERVER_ServerModelIsReady(
      this.#server,
      cString(model),
      BigInt(version),
      this.#cells.flag,
    );
    check(this.#lib, ready, `ModelIsReady "${model}"`);
    if (this.#cells.flag[0] === 0) {
      throw new InferError(
        `Model "${model}" loaded but version ${version < 0 ? "(latest)" : version} is not ready`,
        0,
      );
    }
  }

  serverMetadata(): unknown {
    const s = this.#lib.symbols;
    return this.#json(s.TRITONSERVER_ServerMetadata(this.#server, this.#cells.pointer), "metadata");
  }

  modelMetadata(model: string, version: number): unknown {
    const s = this.#lib.symbols;
    const error = s.TRITONSERVER_ServerModelMetadata(
      this.#server,
      cString(model),
      BigInt(version),
      this.#cells.pointer,
    );
    return this.#json(error, `metadata of model "${model}"`);
  }

  modelConfig(model: string, version: number): unknown {
    const s = this.#lib.symbols;
    // Configuration version 1: the JSON of Triton's /config endpoint.
    const error = s.TRITONSERVER_ServerModelConfig(
      this.#server,
      cString(model),
      BigInt(version),
      1,
      this.#cells.pointer,
    );
    return this.#json(error, `configuration of model "${model}"`);
  }

  /** Statistics of one model, or of every model when `model` is "". */
  modelStatistics(model: string, version: number): unknown {
    const s = this.#lib.symbols;
    const error = s.TRITONSERVER_ServerModelStatistics(
      this.#server,
      cString(model),
      BigInt(version),
      this.#cells.pointer,
    );
    return this.#json(error, `statistics of model "${model}"`);
  }

  /** The TRITONSERVER_Message the call returned in the pointer cell, parsed and deleted. */
  #json(error: Deno.PointerValue, what: string): unknown {
    check(this.#lib, error, `Reading the ${what}`);
    const s = this.#lib.symbols;
    const message = this.#cells.takePointer();
    try {
      const base = this.#cells.pointer;
      check(
        this.#lib,
        s.TRITONSERVER_MessageSerializeToJson(message, base, this.#cells.bytes),
        `Serializing the ${what}`,
      );
      const pointer = Deno.UnsafePointer.create(base[0])!;
      const length = Number(this.#cells.bytes[0]);
      const bytes = new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(pointer, length));
      return JSON.parse(new TextDecoder().decode(bytes));
    } finally {
      s.TRITONSERVER_MessageDelete(message);
    }
  }

  /** Stops the server (in-flight requests finish first) and deletes it; once. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const s = this.#lib.symbols;
    const stopError = await s.TRITONSERVER_ServerStop(this.#server);
    if (stopError !== null) takeError(this.#lib, stopError);
    const deleteError = await s.TRITONSERVER_ServerDelete(this.#server);
    if (deleteError !== null) {
      throw new InferError(`Deleting the server: ${takeError(this.#lib, deleteError)}`, 0);
    }
  }
}
