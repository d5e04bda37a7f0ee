/**
 * The server processes a search starts (tritonserver, an LLM engine): run
 * under a tiny sh wrapper that stops them by PID when inferperf ends, even
 * SIGKILLed; their logs, resident memory and free loopback ports.
 */

const STOP_GRACE_SECS = 10;

/**
 * Runs the server ("$@" after the log file) and prints its PID; exits with
 * the server's code. The server's output goes to the log file ("-": its
 * stderr stays the wrapper's). inferperf holds the write end of its stdin:
 * when that ends (stop(), or inferperf gone, even SIGKILLed) the watcher
 * stops the server by its PID, SIGKILL after the grace period. It signals
 * only the PIDs it started. No value is ever read by a shell: "$@" keeps
 * every argument whole.
 */
const WRAPPER = `log=$1
shift
command -v "$1" >/dev/null 2>&1 || exit 127
exec 3<&0
if [ "$log" = - ]; then
  "$@" </dev/null >/dev/null 3<&- &
else
  "$@" </dev/null >>"$log" 2>&1 3<&- &
fi
server=$!
echo "$server"
exec 1>&-
(while read -r _; do :; done
 kill -TERM "$server" 2>/dev/null
 i=0
 while [ "$i" -lt ${STOP_GRACE_SECS} ] && kill -0 "$server" 2>/dev/null; do sleep 1; i=$((i + 1)); done
 kill -KILL "$server" 2>/dev/null) <&3 3<&- &
watcher=$!
exec 3<&-
wait "$server"
code=$?
kill "$watcher" 2>/dev/null
exit "$code"`;

export interface Launched {
  pid: number;
  status: Promise<Deno.CommandStatus>;
  /** True once the server has exited. */
  readonly exited: boolean;
  /** The end of its stderr when not logged to a file (Triton's flag errors). */
  stderr(): string;
  /** Stops it (SIGTERM, SIGKILL after the grace period); resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `command` (the program, then its arguments) under the wrapper in
 * its own process group (a terminal's Ctrl-C must not stop it under the
 * running point), its output appended to `log` when given. Undefined when
 * the program is not found.
 */
export async function launch(
  command: readonly string[],
  options: { log?: string; env?: Record<string, string> },
): Promise<Launched | undefined> {
  const child = new Deno.Command("sh", {
    args: ["-c", WRAPPER, "sh", options.log ?? "-", ...command],
    detached: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    ...(options.env ? { env: options.env } : {}),
  }).spawn();
  const pidLine = await new Response(child.stdout).text();
  const status = child.status;
  if (pidLine === "" && (await status).code === 127) return undefined;
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr = (stderr + decoder.decode(chunk)).slice(-4000);
  })().catch(() => {});
  let exited = false;
  void status.then(() => exited = true);
  const stdin = child.stdin.getWriter();
  let stopped: Promise<void> | undefined;
  return {
    pid: Number(pidLine.trim()),
    status,
    get exited() {
      return exited;
    },
    stderr: () => stderr,
    // The end of the wrapper's stdin stops the server.
    stop: () =>
      stopped ??= (async () => {
        await stdin.close().catch(() => {});
        await status;
      })(),
  };
}

/** A loopback port free a moment ago (the servers can not report an ephemeral one). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

export function readLog(file: string): string {
  try {
    return Deno.readTextFileSync(file);
  } catch {
    return "";
  }
}

/** The last `count` non-empty lines of `text`, joined with " | ". */
export function lastLines(text: string, count: number): string {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.length === 0 ? "(nothing)" : lines.slice(-count).join(" | ");
}

/** VmRSS of a process in MB, read with cat: Deno reads /proc only with --allow-all. */
export async function residentMb(pid: number): Promise<number | undefined> {
  try {
    const output = await new Deno.Command("cat", {
      args: [`/proc/${pid}/status`],
      stdout: "piped",
      stderr: "null",
    }).output();
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(new TextDecoder().decode(output.stdout))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}
