/** Child processes of the bench: running tools, sampling their CPU and memory from /proc. */

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on every Linux architecture in use). */
const USER_HZ = 100;
const SEARCH_DIRS = ["/usr/sbin", "/sbin", "/usr/local/sbin"];

export interface ProcessSample {
  /** performance.now() when read. */
  timeMs: number;
  /** User plus system CPU time so far. */
  cpuMs: number;
  /** Resident set size now and at its peak (VmRSS, VmHWM). */
  rssKb: number;
  hwmKb: number;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

export interface CountedSample extends ProcessSample {
  /** What `counter` returned just before (requests served so far, say). */
  count: number;
}

export interface SampledResult extends CommandResult {
  /** performance.now() just before the spawn. */
  startMs: number;
  /** In time order; the process's last moments before exit are not in them. */
  samples: CountedSample[];
}

const decoder = new TextDecoder();

/** The path of an executable on PATH (or in the sbin directories, where nginx lives), if any. */
export function findExecutable(name: string): string | undefined {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== ""), ...SEARCH_DIRS];
  for (const dir of dirs) {
    const path = `${dir}/${name}`;
    try {
      const info = Deno.statSync(path);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return path;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

/**
 * Text of /proc files, read by `cat`: Deno 2 lets only --allow-all read
 * /proc, and the bench task grants --allow-run instead. Undefined when a file
 * is gone (the process exited).
 */
export async function readProc(paths: readonly string[]): Promise<string | undefined> {
  const output = await new Deno.Command("cat", {
    args: [...paths],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return output.code === 0 ? decoder.decode(output.stdout) : undefined;
}

/** CPU time and memory of a live process; undefined once it is exiting. */
export async function sampleProcess(pid: number): Promise<ProcessSample | undefined> {
  const text = await readProc([`/proc/${pid}/stat`, `/proc/${pid}/status`]);
  const timeMs = performance.now();
  if (text === undefined) return undefined;
  const newline = text.indexOf("\n");
  const stat = text.slice(0, newline);
  const status = text.slice(newline + 1);
  // Fields after the parenthesized command name: state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  const kb = (key: string) => new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1];
  const rss = kb("VmRSS");
  const hwm = kb("VmHWM");
  // A zombie has no memory figures, and its times may no longer cover every thread.
  if (rss === undefined || hwm === undefined) return undefined;
  return { timeMs, cpuMs: (ticks * 1000) / USER_HZ, rssKb: Number(rss), hwmKb: Number(hwm) };
}

/**
 * Servers on one CPU, clients on another (`--pin`): the bench process pins
 * itself, and so the servers it starts (nginx, its reference server's
 * thread, ...) inherit the server CPU, while every command run through
 * runCommand or runSampled (the clients) is started by taskset on the other.
 */
export interface Pinning {
  taskset: string;
  server: number;
  client: number;
}

let pinning: Pinning | undefined;

/** Pins from now on, or with undefined lets everything run on every CPU again. */
export async function pin(to: Pinning | undefined): Promise<void> {
  const taskset = to?.taskset ?? findExecutable("taskset");
  pinning = to;
  if (taskset === undefined) return;
  const cpus = to === undefined ? `0-${navigator.hardwareConcurrency - 1}` : String(to.server);
  // A thread that exits while taskset walks the process's threads (a server's worker closing)
  // fails the whole call with "No such process": the next attempt sees the threads left.
  for (let attempt = 1;; attempt++) {
    const result = await new Deno.Command(taskset, {
      args: ["-a", "-p", "-c", cpus, String(Deno.pid)],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (result.code === 0) return;
    const message = decoder.decode(result.stderr).trim();
    if (attempt < 3 && message.includes("No such process")) continue;
    throw new Error(`taskset -a -p -c ${cpus} failed: ${message}`);
  }
}

/** In words, for the report. */
export function describePinning(to: Pinning): string {
  return `pinned: servers on CPU ${to.server}, clients on CPU ${to.client} (taskset)`;
}

/** The command line that runs a client, on the client CPU when pinned. */
function client(command: string, args: readonly string[]): [string, string[]] {
  return pinning === undefined
    ? [command, [...args]]
    : [pinning.taskset, ["-c", String(pinning.client), command, ...args]];
}

/** Runs a command (a client) to completion, capturing its output. */
export async function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd?: string } = {},
): Promise<CommandResult> {
  const start = performance.now();
  const [program, argv] = client(command, args);
  const output = await new Deno.Command(program, {
    args: argv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    ...(options.cwd ? { cwd: options.cwd } : {}),
  }).output();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    elapsedMs: performance.now() - start,
  };
}

export interface SampleOptions {
  intervalMs: number;
  cwd?: string;
  /** Read before each sample, e.g. the requests a server has answered. */
  counter?: () => Promise<number>;
}

/**
 * Runs a command (a client) to completion while sampling its CPU time and memory every
 * `intervalMs`, each sample paired with `counter()` read just before.
 */
export async function runSampled(
  command: string,
  args: readonly string[],
  options: SampleOptions,
): Promise<SampledResult> {
  const start = performance.now();
  // taskset execs the command: the PID sampled is the client's.
  const [program, argv] = client(command, args);
  const child = new Deno.Command(program, {
    args: argv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    ...(options.cwd ? { cwd: options.cwd } : {}),
  }).spawn();
  const samples: CountedSample[] = [];
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const count = options.counter ? await options.counter() : 0;
      const sample = await sampleProcess(child.pid);
      if (sample === undefined || done) break;
      samples.push({ ...sample, count });
      await new Promise((r) => setTimeout(r, options.intervalMs));
    }
  })();
  const output = await child.output();
  done = true;
  await sampling;
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    elapsedMs: performance.now() - start,
    startMs: start,
    samples,
  };
}

/** Start-up and JIT warmup left out of the steady-state figures by default. */
export const STEADY_SKIP_MS = 2000;

export interface SteadyState {
  seconds: number;
  requests: number;
  rate: number;
  cpuUsPerRequest: number;
  /** Resident memory when the steady state began and ended. */
  rssStartMb: number;
  rssEndMb: number;
}

/**
 * Figures between `skipMs` (default STEADY_SKIP_MS) after the first served request
 * and the last sample taken under load.
 */
export function steadyState(
  samples: readonly CountedSample[],
  options: { skipMs?: number } = {},
): SteadyState | undefined {
  // Counters that do not start at 0 (a server that served earlier runs) count from the first sample.
  const base = samples[0]?.count ?? 0;
  const started = samples.findIndex((s) => s.count > base);
  if (started < 0) return undefined;
  const skipMs = options.skipMs ?? STEADY_SKIP_MS;
  const from = samples.findIndex((s) => s.timeMs >= samples[started].timeMs + skipMs);
  const final = samples[samples.length - 1].count;
  const to = samples.findLastIndex((s) => s.count < final);
  if (from < 0 || to <= from) return undefined;
  const a = samples[from];
  const b = samples[to];
  const requests = b.count - a.count;
  return {
    seconds: (b.timeMs - a.timeMs) / 1000,
    requests,
    rate: (requests * 1000) / (b.timeMs - a.timeMs),
    cpuUsPerRequest: ((b.cpuMs - a.cpuMs) * 1000) / requests,
    rssStartMb: a.rssKb / 1024,
    rssEndMb: b.rssKb / 1024,
  };
}

/** A loopback port that was free a moment ago, for servers that cannot report an ephemeral one. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Resolves once something accepts TCP connections on the port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, options: { timeoutMs: number }): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch (error) {
      if (performance.now() > deadline) {
        throw new Error(`Nothing listens on port ${port} after ${options.timeoutMs} ms`, {
          cause: error,
        });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("The median of no values is undefined");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
