/**
 * genai-perf, unchanged, with this checkout's inferperf as its
 * `perf_analyzer`: a shim first on PATH runs `deno run main.ts`. genai-perf
 * comes from `../shared/genai-perf` beside the repository (or
 * `GENAI_PERF_DIR`), installed with its `install.sh` into a Python virtual
 * environment: `GENAI_PERF_VENV` when set (.ci/run sets it, installs there
 * and writes the same marker as here), else a cached one in the temporary
 * directory, installed on first use. Where it cannot be had,
 * `findGenaiPerf` says why.
 */
const FROM_ENV = Deno.env.get("GENAI_PERF_DIR");
const DIR = (FROM_ENV ?? new URL("../../shared/genai-perf/", import.meta.url).pathname)
  .replace(/\/+$/, "");
const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** Written into a venv once install.sh succeeded there. */
const MARKER = ".inferperf-installed";
const INSTALL_TIMEOUT_MS = 240_000;

export interface GenaiPerf {
  /** The genai-perf executable of the venv. */
  bin: string;
  /** The Hugging Face tokenizer directory of the llama.cpp model (--tokenizer). */
  tokenizer: string;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Runs install.sh VENV, bounded in time; the last line of its output when it fails. */
async function install(venv: string): Promise<string | undefined> {
  const child = new Deno.Command("bash", {
    args: [`${DIR}/install.sh`, venv],
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

/** genai-perf ready to run (installed first when needed), or why not. */
export async function findGenaiPerf(): Promise<GenaiPerf | { reason: string }> {
  if (!exists(`${DIR}/install.sh`)) {
    const where = FROM_ENV === undefined ? "beside the repository" : "from GENAI_PERF_DIR";
    return { reason: `no ${DIR}/install.sh (${where})` };
  }
  const given = Deno.env.get("GENAI_PERF_VENV");
  const venv = given ?? `${Deno.env.get("TMPDIR") ?? "/tmp"}/inferperf-genai-perf-venv`;
  const found = { bin: `${venv}/bin/genai-perf`, tokenizer: `${DIR}/tokenizer-llama-spm` };
  if (exists(`${venv}/${MARKER}`)) return found;
  if (given !== undefined) {
    return {
      reason: `GENAI_PERF_VENV=${given} holds no installed genai-perf (.ci/run installs it)`,
    };
  }
  const failure = await install(venv);
  if (failure !== undefined) return { reason: failure };
  await Deno.writeTextFile(`${venv}/${MARKER}`, "");
  return found;
}

/**
 * A directory holding `perf_analyzer`, which runs this checkout's main.ts with
 * Deno (with `extraArgs` after genai-perf's).
 */
export async function perfAnalyzerShim(
  dir: string,
  extraArgs: readonly string[] = [],
): Promise<void> {
  const permissions = "--allow-net --allow-read --allow-write --allow-env --allow-sys";
  const path = `${dir}/perf_analyzer`;
  const extra = extraArgs.map((a) => ` '${a}'`).join("");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec '${Deno.execPath()}' run ${permissions} '${MAIN}' "$@"${extra}\n`,
  );
  await Deno.chmod(path, 0o755);
}

export interface GenaiPerfRun {
  code: number;
  /** stdout and stderr, interleaved as far as the pipes tell. */
  output: string;
}

/** Runs `genai-perf ARGS` with `shimDir` first on PATH; SIGKILL after `timeoutMs`. */
export async function runGenaiPerf(
  genaiPerf: GenaiPerf,
  args: readonly string[],
  options: { shimDir: string; cwd: string; timeoutMs?: number },
): Promise<GenaiPerfRun> {
  const child = new Deno.Command(genaiPerf.bin, {
    args: [...args],
    cwd: options.cwd,
    env: {
      PATH: `${options.shimDir}:${Deno.env.get("PATH") ?? ""}`,
      // The tokenizer is a local directory; no hub is reachable.
      HF_HUB_OFFLINE: "1",
      TRANSFORMERS_OFFLINE: "1",
      // Wide enough that genai-perf's log lines (the perf_analyzer command) are not wrapped.
      COLUMNS: "400",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  const { code, stdout, stderr } = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}
