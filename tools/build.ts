/**
 * Builds the distributable forms of inferperf:
 *
 * - `bundle`: one JavaScript file, dist/inferperf.js, that runs with
 *   `deno run --no-remote --no-npm --no-config` and nothing else on disk.
 * - `compile`: that bundle compiled into a self-contained binary,
 *   dist/inferperf (or dist/inferperf-TARGET with --target), with a fixed,
 *   explicit permission set.
 *
 * Usage: `deno task bundle [--output FILE]`,
 * `deno task compile [--target TARGET] [--output FILE]`.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = new URL("../", import.meta.url);
const DIST = new URL("dist/", ROOT);

/**
 * What the compiled binary may do: reach any inference server, read input
 * data, model configs and certificates, write reports, load native code
 * for two modes only (ffi): the system's MPI library with --enable-mpi, and
 * Triton's libtritonserver.so with --service-kind triton_c_api; and run two
 * programs (run): `sh`, the wrapper that starts the server of a search (an
 * engine's command, tritonserver in local mode) and stops it by its PID
 * when inferperf ends, and `cat`, which reads that server's resident memory
 * from /proc (Deno reads /proc only with --allow-all). Nothing else (no env,
 * sys or import): the binary starts no other program itself and fetches
 * no code.
 */
const COMPILE_PERMISSIONS: readonly string[] = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-ffi",
  "--allow-run=sh,cat",
];

/**
 * `deno bundle` for the browser platform, so that npm packages resolve to
 * their ES module builds: the CommonJS shim esbuild emits otherwise calls
 * createRequire(import.meta.url), which rejects the worker's data: URL and
 * loads Node's module system (about 15 ms) at every start of the main bundle.
 */
const BUNDLE: readonly string[] = ["bundle", "-q", "--platform", "browser"];

/**
 * Baked into the binary (deno compile keeps --v8-flags). V8 grows its young
 * generation to 2 x 16 MB over a long run and sizes the old one from what
 * that promotes: 2 x 4 MB held a 2-minute run at 5,000 req/s to 111 MB RSS
 * instead of 157, at no measurable CPU cost (BENCHMARKS.md). `deno task
 * start` and the bench pass the same flag.
 */
const V8_FLAGS = "--v8-flags=--max-semi-space-size=4";

/** The targets the release workflow builds (`deno compile --target`). */
export const RELEASE_TARGETS: readonly string[] = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
];

/** A build step failed; the message says what to do about it. */
export class BuildError extends Error {
  override name = "BuildError";
  constructor(message: string, readonly output = "") {
    super(message);
  }
}

export interface BundleOptions {
  /** Default dist/inferperf.js. */
  output?: string;
}

export interface CompileOptions {
  /** A `deno compile --target`; default the host. */
  target?: string;
  /**
   * Default dist/inferperf, or dist/inferperf-TARGET[.exe] with a target.
   * The bundle it compiles is written beside it as inferperf.js.
   */
  output?: string;
}

export interface Artifact {
  path: string;
  bytes: number;
}

async function runDeno(args: string[]): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  if (out.success) return;
  const decoder = new TextDecoder();
  const output = decoder.decode(out.stdout) + decoder.decode(out.stderr);
  throw new BuildError(`"deno ${args[0]}" failed (exit code ${out.code})`, output);
}

function base64(bytes: Uint8Array): string {
  const chunk = 0x8000;
  let binary = "";
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

async function artifact(path: string): Promise<Artifact> {
  return { path, bytes: (await Deno.stat(path)).size };
}

/**
 * Bundles main.ts with the server worker embedded as a data: URL: the
 * worker is bundled first, then lib/server/worker_url.ts is mapped to a
 * module exporting that URL.
 */
export async function bundle(options: BundleOptions = {}): Promise<Artifact> {
  const output = resolve(options.output ?? fileURLToPath(new URL("inferperf.js", DIST)));
  // Beside the output rather than in a temporary directory: esbuild names
  // each module's path in a comment, and the same path gives the same bundle.
  const work = new URL(".bundle/", pathToFileURL(output));
  await Deno.mkdir(work, { recursive: true });
  try {
    const worker = fileURLToPath(new URL("worker.js", work));
    await runDeno([...BUNDLE, "-o", worker, "lib/server/worker.ts"]);
    const workerUrl = `data:text/javascript;base64,${base64(await Deno.readFile(worker))}`;
    const workerModule = new URL("worker_url.js", work);
    await Deno.writeTextFile(
      workerModule,
      `export const WORKER_URL = ${JSON.stringify(workerUrl)};\n`,
    );
    const importMap = new URL("import_map.json", work);
    const imports = { [new URL("lib/server/worker_url.ts", ROOT).href]: workerModule.href };
    await Deno.writeTextFile(importMap, JSON.stringify({ imports }));
    const map = fileURLToPath(importMap);
    await runDeno([...BUNDLE, "--import-map", map, "-o", output, "main.ts"]);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
  if ((await Deno.readTextFile(output)).includes('"./worker.ts"')) {
    throw new BuildError(
      `The bundle "${output}" still loads "./worker.ts": the worker must come from lib/server/worker_url.ts`,
    );
  }
  return await artifact(output);
}

function defaultBinary(target: string | undefined): string {
  if (target === undefined) return fileURLToPath(new URL("inferperf", DIST));
  const suffix = target.includes("windows") ? ".exe" : "";
  return fileURLToPath(new URL(`inferperf-${target}${suffix}`, DIST));
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

function denortHelp(target: string): string {
  return `fetch denort-${target}.zip of Deno ${Deno.version.deno} from ` +
    `https://github.com/denoland/deno/releases on a connected machine, copy it to this host, ` +
    `unzip it and set DENORT_BIN to the denort binary inside`;
}

/** The binary must print the version line, else the runtime under it is not denort. */
async function checkBinary(path: string, denortBin: string | undefined): Promise<void> {
  const out = await new Deno.Command(path, {
    args: ["--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.success && text.startsWith("inferperf ")) return;
  const runtime = denortBin ? `DENORT_BIN "${denortBin}"` : "the downloaded runtime";
  throw new BuildError(
    `The compiled "${path}" does not run inferperf (--version printed ${
      JSON.stringify(text.slice(0, 60))
    }): ${runtime} is not a denort binary of Deno ${Deno.version.deno}`,
  );
}

/**
 * `deno compile` of the bundle with COMPILE_PERMISSIONS. deno compile puts
 * the program on a runtime binary (denort) that it downloads from
 * dl.deno.land unless DENORT_BIN names one, which is how hosts without
 * internet compile. A binary for the host is run once to prove it works.
 */
export async function compile(options: CompileOptions = {}): Promise<Artifact> {
  const target = options.target;
  if (target !== undefined && !RELEASE_TARGETS.includes(target)) {
    throw new BuildError(
      `Unknown target "${target}": use one of ${RELEASE_TARGETS.map((t) => `"${t}"`).join(", ")}`,
    );
  }
  const runtimeTarget = target ?? Deno.build.target;
  const denortBin = Deno.env.get("DENORT_BIN") || undefined;
  if (denortBin !== undefined && !(await exists(denortBin))) {
    throw new BuildError(
      `DENORT_BIN is "${denortBin}", which does not exist: ${denortHelp(runtimeTarget)}`,
    );
  }
  const output = resolve(options.output ?? defaultBinary(target));
  const source = (await bundle({ output: join(dirname(output), "inferperf.js") })).path;
  const args = ["compile", "--no-config", V8_FLAGS, ...COMPILE_PERMISSIONS, "-o", output];
  if (target !== undefined) args.push("--target", target);
  try {
    await runDeno([...args, source]);
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    if (denortBin !== undefined) {
      throw new BuildError(
        `deno compile failed with DENORT_BIN "${denortBin}", which must be the denort binary ` +
          `of Deno ${Deno.version.deno} for ${runtimeTarget}`,
        error.output,
      );
    }
    if (/denort/.test(error.output)) {
      throw new BuildError(
        `deno compile could not download its runtime (denort for ${runtimeTarget}); ` +
          `without internet, ${denortHelp(runtimeTarget)}`,
        error.output,
      );
    }
    throw error;
  }
  if (runtimeTarget === Deno.build.target) {
    try {
      await checkBinary(output, denortBin);
    } catch (error) {
      await Deno.remove(output);
      throw error;
    }
  }
  return await artifact(output);
}

function formatSize(bytes: number): string {
  return bytes >= 1 << 20
    ? `${(bytes / (1 << 20)).toFixed(1)} MiB`
    : `${Math.ceil(bytes / 1024)} KiB`;
}

const USAGE =
  "Usage: tools/build.ts bundle [--output FILE] | compile [--target TARGET] [--output FILE]";

function build(args: string[]): Promise<Artifact> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { output: { type: "string" }, target: { type: "string" } },
    });
  } catch (error) {
    throw new BuildError(`${(error as Error).message}\n${USAGE}`);
  }
  const { positionals: [command, ...rest], values } = parsed;
  if (rest.length > 0) throw new BuildError(USAGE);
  if (command === "bundle" && values.target === undefined) return bundle(values);
  if (command === "compile") return compile(values);
  throw new BuildError(USAGE);
}

if (import.meta.main) {
  try {
    const built = await build(Deno.args);
    console.log(`${built.path}: ${formatSize(built.bytes)}`);
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    if (error.output) console.error(error.output.trimEnd());
    console.error(`error: ${error.message}`);
    Deno.exit(1);
  }
}
