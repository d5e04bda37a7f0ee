/** Shared helpers of the end-to-end tests: run the CLI as a user would, check ground truth. */
import assert from "node:assert/strict";
import { splitCsv } from "../lib/input/traces.ts";
import { type ModelConfig, type RunningServer, startServerInWorker } from "../lib/server/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** The permissions the compiled binary has. */
const BINARY_PERMISSIONS = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** SIGKILL after this long; default 60 s. */
  timeoutMs?: number;
  /** SIGINT at these times after the start. */
  signalAfterMs?: number[];
  /**
   * Once stdout shows this text, `signals` (default 1) SIGINTs 150 ms apart
   * (apart, so that they are not merged into one).
   */
  signalAt?: string;
  signals?: number;
  /** SIGKILL once stdout shows this text (a crash of inferperf itself). */
  killAt?: string;
  /** Called with all of stdout so far after each chunk (e.g. to act once a level is reported). */
  onStdout?: (stdout: string) => void;
  cwd?: string;
  /** Deno permission flags instead of the binary's (e.g. ["-A"]). */
  permissions?: string[];
  /** Environment variables added to the inherited ones. */
  env?: Record<string, string>;
}

/** Runs `inferperf ARGS` in a child process. */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...(options.permissions ?? BINARY_PERMISSIONS), MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  }).spawn();
  const interrupt = () => {
    try {
      child.kill("SIGINT");
    } catch {
      // The run may already have exited.
    }
  };
  const timers = (options.signalAfterMs ?? []).map((ms) => setTimeout(interrupt, ms));
  const killer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  try {
    const stderr = new Response(child.stderr).text();
    const decoder = new TextDecoder();
    let stdout = "";
    let signalled = false;
    for await (const chunk of child.stdout) {
      stdout += decoder.decode(chunk, { stream: true });
      options.onStdout?.(stdout);
      if (options.killAt !== undefined && stdout.includes(options.killAt)) child.kill("SIGKILL");
      if (options.signalAt !== undefined && !signalled && stdout.includes(options.signalAt)) {
        signalled = true;
        for (let i = 0; i < (options.signals ?? 1); i++) {
          timers.push(setTimeout(interrupt, i * 150));
        }
      }
    }
    stdout += decoder.decode();
    const { code } = await child.status;
    return { code, stdout, stderr: await stderr };
  } finally {
    clearTimeout(killer);
    timers.forEach(clearTimeout);
  }
}

/**
 * `inferperf serve` in a child process (ports 0: free ones), so that a test
 * can kill it like a crashing server, start it again on the same ports, or
 * run it with -A (/dev/shm).
 */
export class ServeProcess {
  #child: Deno.ChildProcess | undefined;
  /** The HTTP and gRPC addresses the server printed, once started. */
  http = "";
  grpc = "";
  constructor(readonly httpPort: number, readonly grpcPort: number) {}

  /** Starts the server and resolves once it listens. */
  async start(): Promise<void> {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...["run", "-A", MAIN, "serve", "--http-port", `${this.httpPort}`],
        ...["--grpc-port", `${this.grpcPort}`, "--metrics-port", "0", "--tfserving-port", "-1"],
      ],
      stdout: "piped",
      stderr: "null",
      env: { NO_COLOR: "1" },
    }).spawn();
    this.#child = child;
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`inferperf serve exited: ${text}`);
      text += value;
    }
    this.http = /HTTP on (\S+),/.exec(text)![1];
    this.grpc = /gRPC on (\S+),/.exec(text)![1];
    // Keep draining so that the child never blocks on a full pipe.
    (async () => {
      while (!(await reader.read()).done);
    })().catch(() => {});
  }

  /** SIGKILL by default, as a crash: no graceful close of the connections. */
  async kill(signal: Deno.Signal = "SIGKILL"): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    child.kill(signal);
    await child.status;
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

/** A CSV's rows of cells (quoted cells as the CSV writers quote them: commas, doubled quotes). */
export function parseCsv(text: string): string[][] {
  return text.trim().split("\n").map(splitCsv);
}

export function within(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= expected * tolerance,
    `${what}: ${actual} not within ${tolerance * 100}% of ${expected}`,
  );
}

/**
 * Triton's count of what a run sent, `sent`: Triton records a request in its statistics after
 * sending its answer, so the snapshot taken as the last answer arrives can miss it (29 of 30
 * seen in a full CI run); `last` is how much the last request adds to the count (its batch).
 */
export function assertTritonCount(
  counted: number,
  sent: number,
  options: { last?: number; what: string },
): void {
  assert.ok(
    counted <= sent && counted >= sent - (options.last ?? 1),
    `${options.what}: ${counted} counted, ${sent} sent`,
  );
}

/**
 * How late a sleep of the server's models wakes at most, as a factor of the nominal time: a host
 * that steals the VM's CPU wakes it late (12.7 ms for 10 seen in a full CI run), never early.
 */
export const SLEEP_LATEST = 1.3;

/** The server's compute time for a model that sleeps `nominalMs` per execution. */
export function assertSleepCompute(nominalMs: number, computeMs: number, what: string): void {
  assert.ok(
    computeMs >= nominalMs * 0.95 && computeMs <= nominalMs * SLEEP_LATEST,
    `compute ${what}: ${computeMs} ms`,
  );
}

/**
 * A point of a model that sleeps `nominalMs` per execution, judged by ground truth: its compute
 * time (assertSleepCompute); under a closed loop of `concurrency`, Little's law between the
 * client's throughput (requests per second) and average latency within `tolerance`; for requests
 * that never queue (`unqueued`), latency between the compute time and 5 ms more, each request's
 * trip to the server and back (1 ms on an idle 2-core machine to Triton, 2.5 ms seen on a busy CI
 * host).
 */
export function assertSleepPoint(
  point: {
    nominalMs: number;
    computeMs: number;
    throughput: number;
    latencyMs: number;
    concurrency?: number;
  },
  options: { tolerance: number; what: string; unqueued?: boolean },
): void {
  const { nominalMs, computeMs, throughput, latencyMs, concurrency } = point;
  assertSleepCompute(nominalMs, computeMs, options.what);
  if (concurrency !== undefined) {
    within(
      throughput * latencyMs / 1000,
      concurrency,
      options.tolerance,
      `throughput x latency ${options.what}`,
    );
  }
  if (options.unqueued) {
    assert.ok(
      latencyMs >= computeMs && latencyMs <= computeMs + 5,
      `latency ${options.what}: ${latencyMs} ms`,
    );
  }
}

/** A `--verbose-csv` report of the `slow` model at concurrency 1 and 4. */
export interface SlowModelRun {
  cli: CliResult;
  header: string[];
  /** The number in column `name` of the row of concurrency `level`. */
  column(level: number, name: string): number;
  /** The model's service time as the server measured it at concurrency 4, microseconds. */
  delayUs: number;
}

/**
 * Profiles the `slow` model (10 ms on one instance; `options.model` names
 * another such model) at concurrency 1 and 4 on the server `args` name
 * (`options` as runCli's), and checks the CSV against Little's law and the
 * server's own compute time: about 10 ms, at most 1 / compute infer/s, all
 * of it once requests queue. Tolerances are wide for a noisy 2-core machine but catch a wrong
 * formula. Windows last `options.windowMs` (default 1000).
 */
export async function profileSlowModel(
  args: string[],
  options: CliOptions & { model?: string; windowMs?: number } = {},
): Promise<SlowModelRun> {
  const { model = "slow", windowMs = 1000, ...cliOptions } = options;
  const dir = await Deno.makeTempDir();
  try {
    const csv = `${dir}/perf.csv`;
    const cli = await runCli([
      "-m",
      model,
      ...args,
      "--concurrency-range",
      "1:4:3",
      "-p",
      String(windowMs),
      "-f",
      csv,
      "--verbose-csv",
    ], cliOptions);
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    const [header, ...rows] = parseCsv(await Deno.readTextFile(csv));
    const byLevel = new Map(rows.map((row) => [Number(row[0]), row]));
    const column = (level: number, name: string) =>
      Number(byLevel.get(level)![header.indexOf(name)]);
    // The service time is what the server measured the 10 ms sleep to take.
    const delayUs = column(4, "Server Compute Infer");
    for (const level of [1, 4]) {
      const row = `\n${header.join(",")}\n${byLevel.get(level)!.join(",")}`;
      const compute = column(level, "Server Compute Infer");
      const throughput = column(level, "Inferences/Second");
      const latency = column(level, "Avg latency");
      assertSleepPoint(
        {
          nominalMs: 10,
          computeMs: compute / 1000,
          throughput,
          latencyMs: latency / 1000,
          concurrency: level,
        },
        { tolerance: 0.1, what: `at ${level}${row}`, unqueued: level === 1 },
      );
      // One instance: one execution at a time, all of them busy once requests queue.
      assert.ok(throughput <= 1.1e6 / compute, `throughput at ${level}: ${throughput}${row}`);
      if (level > 1) within(throughput, 1e6 / delayUs, 0.15, `throughput at ${level}${row}`);
    }
    return { cli, header, column, delayUs };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** One FP32[16] input and output, for identity models. */
export const FP32_16 = {
  inputs: [{ name: "INPUT0", datatype: "FP32" as const, dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32" as const, dims: [16] }],
};

/** A sequence model (the server checks start/end flags and ids) that answers in 1 ms. */
export const ACCUMULATE_MODEL: ModelConfig = {
  name: "acc",
  kind: "accumulate",
  compute_ms: 1,
  instances: 2,
  sequence_batching: {},
  inputs: [{ name: "INPUT", datatype: "INT32", dims: [4] }],
  outputs: [{ name: "OUTPUT", datatype: "INT32", dims: [4] }],
};
