/**
 * NVIDIA's Python tools that run perf_analyzer (genai-perf, Model Analyzer),
 * unchanged, with this checkout's inferperf in its place. Each comes from a
 * folder of ../shared beside the repository (or its `*_DIR` variable) with
 * an `install.sh VENV` that builds it into a Python virtual environment:
 * the venv of its `*_VENV` variable when set (.ci/run sets it, installs there
 * and writes the same marker as here), else a cached one in the temporary
 * directory, installed on first use. Where it cannot be had, `findTool`
 * says why in one line.
 */
const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** Written into a venv once install.sh succeeded there. */
const MARKER = ".inferperf-installed";
const INSTALL_TIMEOUT_MS = 240_000;

export interface ToolInstall {
  /** The tool's folder (install.sh and what it ships beside it). */
  dir: string;
  /** The virtual environment it is installed in. */
  venv: string;
}

export interface ToolSpec {
  /** The folder under ../shared beside the repository: "genai-perf". */
  folder: string;
  /** The variable naming another folder: "GENAI_PERF_DIR". */
  dirVariable: string;
  /** The variable naming the venv: "GENAI_PERF_VENV". */
  venvVariable: string;
}

export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Runs install.sh VENV, bounded in time; the last line of its output when it fails. */
async function install(dir: string, venv: string): Promise<string | undefined> {
  const child = new Deno.Command("bash", {
    args: [`${dir}/install.sh`, venv],
    // Without PyPI, pip gives up on it at once and uses the indexes its configuration adds.
    env: { PIP_RETRIES: "0", PIP_TIMEOUT: "10" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
  const { code, stdout, stderr } = await child.output();
  clearTimeout(timer);
  if (code === 0) return undefined;
  const text = new TextDecoder().decode(stderr) + new TextDecoder().decode(stdout);
  const last = text.trim().split("\n").filter((l) => !l.startsWith("WARNING")).at(-1);
  return code === 137 || code === 9
    ? `install.sh did not finish within ${INSTALL_TIMEOUT_MS / 1000} s`
    : `install.sh failed: ${last ?? `exit code ${code}`}`;
}

/** The tool ready to run (installed first when needed), or why not. */
export async function findTool(spec: ToolSpec): Promise<ToolInstall | { reason: string }> {
  const fromEnv = Deno.env.get(spec.dirVariable);
  const dir = (fromEnv ?? new URL(`../../shared/${spec.folder}/`, import.meta.url).pathname)
    .replace(/\/+$/, "");
  if (!exists(`${dir}/install.sh`)) {
    const where = fromEnv === undefined ? "beside the repository" : `from ${spec.dirVariable}`;
    return { reason: `no ${dir}/install.sh (${where})` };
  }
  const given = Deno.env.get(spec.venvVariable);
  const venv = given ?? `${Deno.env.get("TMPDIR") ?? "/tmp"}/inferperf-${spec.folder}-venv`;
  if (exists(`${venv}/${MARKER}`)) return { dir, venv };
  if (given !== undefined) {
    return {
      reason:
        `${spec.venvVariable}=${given} holds no installed ${spec.folder} (.ci/run installs it)`,
    };
  }
  const failure = await install(dir, venv);
  if (failure !== undefined) return { reason: failure };
  await Deno.writeTextFile(`${venv}/${MARKER}`, "");
  return { dir, venv };
}

/**
 * A directory holding `perf_analyzer`, which runs this checkout's main.ts with
 * Deno (with `extraArgs` after the tool's), allowed FFI for --enable-mpi
 * (Model Analyzer's concurrent search runs it under mpiexec).
 */
export async function perfAnalyzerShim(
  dir: string,
  extraArgs: readonly string[] = [],
): Promise<void> {
  const permissions = "--allow-net --allow-read --allow-write --allow-env --allow-sys --allow-ffi";
  const path = `${dir}/perf_analyzer`;
  const extra = extraArgs.map((a) => ` '${a}'`).join("");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec '${Deno.execPath()}' run ${permissions} '${MAIN}' "$@"${extra}\n`,
  );
  await Deno.chmod(path, 0o755);
}
