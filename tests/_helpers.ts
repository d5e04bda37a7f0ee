/** Shared helpers of the end-to-end tests: run the CLI as a user would. */
import { type RunningServer, startServerInWorker } from "../lib/server/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `inferperf ARGS` in a child process with the permissions the compiled binary has. */
export async function runCli(
  args: string[],
  options: { timeoutMs?: number; signalAfterMs?: number[]; cwd?: string } = {},
): Promise<CliResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      MAIN,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  }).spawn();
  const timers = (options.signalAfterMs ?? []).map((ms) =>
    setTimeout(() => child.kill("SIGINT"), ms)
  );
  const killer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  try {
    const out = await child.output();
    const decoder = new TextDecoder();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } finally {
    clearTimeout(killer);
    timers.forEach(clearTimeout);
  }
}

/** Starts the reference server on a second thread for the duration of `fn`. */
export async function withServer<T>(fn: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await startServerInWorker();
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/** Parses `--` CSV text into rows of cells (the reports never quote numeric cells). */
export function parseCsv(text: string): string[][] {
  return text.trim().split("\n").map((line) => line.split(","));
}
