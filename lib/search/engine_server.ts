/**
 * The engine an engine search measures: local mode starts the variant's
 * command on loopback under the search's process wrapper (stopped by PID
 * when inferperf ends, even SIGKILLed), its output in a log per variant,
 * and waits until it is ready; a variant that does not start is a
 * VariantLoadError with the log's last lines, and the search goes on.
 * Remote mode measures a running engine. Before each point the engine's
 * cache is cleared when asked; after each start the first point warms up.
 */
import { ConnectionError } from "../protocol/errors.ts";
import { UsageError } from "../types/errors.ts";
import { type EngineLaunch } from "./engine_config.ts";
import type { CacheClear, ReadyCheck } from "./engine_presets.ts";
import { type EngineVariant, fillPlaceholders, formatCommand } from "./engine_variants.ts";
import { freePort, lastLines, launch, type Launched, readLog, residentMb } from "./_process.ts";
import { type SearchServer, unmanagedServer, VariantLoadError } from "./server.ts";

const PROBE_MS = 2_000;
const LOG_LINES = 5;

/** Whether `check` passes against the engine at `address` (its log in `log`). */
async function passes(check: ReadyCheck, options: { address: string; log?: string }) {
  if (check.log !== undefined) return readLog(options.log ?? "").includes(check.log);
  try {
    const response = await fetch(`http://${options.address}${check.path}`, {
      signal: AbortSignal.timeout(PROBE_MS),
    });
    await response.body?.cancel();
    return response.status === check.status;
  } catch {
    return false;
  }
}

function readyText(check: ReadyCheck): string {
  return check.log !== undefined
    ? `the log line "${check.log}"`
    : `GET ${check.path} answering ${check.status}`;
}

/** Clears the engine's cache: llama.cpp's slots one by one, or the engine's reset request. */
async function clearCache(address: string, clear: CacheClear): Promise<void> {
  const call = async (method: string, path: string) => {
    const response = await fetch(`http://${address}${path}`, {
      method,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new VariantLoadError(
        `The engine refused to clear its cache (${method} ${path}): ${response.status} ${
          text.trim().slice(0, 200)
        }`,
      );
    }
    return text;
  };
  if (clear.kind === "request") {
    await call(clear.method, clear.path);
    return;
  }
  const slots = JSON.parse(await call("GET", "/slots")) as Array<{ id: number }>;
  for (const slot of slots) await call("POST", `/slots/${slot.id}?action=erase`);
}

/** Checks that engine.port can be listened on, before anything starts. */
export function checkEnginePort(port: number): void {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new UsageError([`engine.port ${port} is in use: stop what listens there or omit port`]);
    }
    throw error;
  }
}

/** What the points add and do around each start: warmup once, then cache clears. */
function pointPreparation(options: { warmup: number; clearCache?: CacheClear }) {
  let fresh = true;
  return {
    started: () => fresh = true,
    async prepare(address: string): Promise<Record<string, string>> {
      if (fresh) {
        fresh = false;
        return options.warmup > 0 ? { "warmup-request-count": String(options.warmup) } : {};
      }
      if (options.clearCache) await clearCache(address, options.clearCache);
      return {};
    },
  };
}

/** The running engine of remote mode: checked once, then measured as it is. */
export async function remoteEngine(
  launch: Extract<EngineLaunch, { mode: "remote" }>,
  options: { warmup: number; clearCache?: CacheClear },
): Promise<SearchServer<EngineVariant>> {
  if (!await passes(launch.ready, { address: launch.url })) {
    throw new ConnectionError(
      `The engine at engine.url ${launch.url} is not ready (${readyText(launch.ready)})`,
      launch.url,
    );
  }
  const points = pointPreparation(options);
  return unmanagedServer({
    description: `the engine at ${launch.url} (remote)`,
    url: launch.url,
    model: (variant) => variant.model,
    preparePoint: () => points.prepare(launch.url),
  });
}

export interface LocalEngine extends SearchServer<EngineVariant> {
  /** The command line each variant ran with, by name (the port of its last start). */
  readonly commands: ReadonlyMap<string, string>;
}

/** A file name for a variant's log: its name with everything but [A-Za-z0-9._=-] as `_`. */
const logName = (index: number, name: string) =>
  `${index}_${name.replace(/[^A-Za-z0-9._=-]+/g, "_")}.log`;

/**
 * Local mode: each variant's engine started on loopback when it is loaded,
 * stopped when it is unloaded. A missing program is a UsageError (no
 * variant can start).
 */
export function localEngine(
  launchConfig: Extract<EngineLaunch, { mode: "local" }>,
  options: {
    warmup: number;
    clearCache?: CacheClear;
    variants: readonly EngineVariant[];
    /** Capacity searches: each variant's levels kept beside its log, resumed on a rerun. */
    capacity?: boolean;
  },
): LocalEngine {
  const points = pointPreparation(options);
  const commands = new Map<string, string>();
  let current: { process: Launched; address: string; log: string } | undefined;
  Deno.mkdirSync(launchConfig.logDirectory, { recursive: true });
  const stop = async () => {
    const running = current;
    current = undefined;
    await running?.process.stop();
  };
  return {
    description: `${launchConfig.preset ?? launchConfig.template[0]} started per variant on ` +
      `127.0.0.1, logs in ${launchConfig.logDirectory}`,
    commands,
    url: () => current?.address,
    async load(variant) {
      await stop();
      const port = launchConfig.port ?? freePort();
      const command = fillPlaceholders(variant.command, { host: "127.0.0.1", port });
      const log = `${launchConfig.logDirectory}/${
        logName(options.variants.indexOf(variant), variant.name)
      }`;
      Deno.writeTextFileSync(log, `# ${formatCommand(command)}\n`, { append: true });
      commands.set(variant.name, formatCommand(command));
      const process = await launch(command, { log, env: variant.env });
      if (process === undefined) {
        throw new UsageError([
          `Can not start the engine "${command[0]}": not found (engine.command)`,
        ]);
      }
      const address = `127.0.0.1:${port}`;
      const deadline = performance.now() + launchConfig.ready.timeoutMs;
      while (!await passes(launchConfig.ready, { address, log })) {
        if (process.exited || performance.now() > deadline) {
          const why = process.exited
            ? `exited with code ${(await process.status).code} at start`
            : `was not ready within ${launchConfig.ready.timeoutMs / 1000} s (${
              readyText(launchConfig.ready)
            })`;
          await process.stop();
          throw new VariantLoadError(
            `The engine ${why}; its log ends: ${lastLines(readLog(log), LOG_LINES)} (log: ${log})`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      current = { process, address, log };
      points.started();
      return variant.model;
    },
    unload: () => stop(),
    preparePoint: async () => ({
      ...await points.prepare(current!.address),
      ...(options.capacity ? { "search-checkpoint": `${current!.log}.capacity.ckpt` } : {}),
    }),
    usedRamMb: () => current ? residentMb(current.process.pid) : Promise.resolve(undefined),
    get exited() {
      return current === undefined || current.process.exited;
    },
    lost: () => Promise.resolve(current?.process.exited ?? false),
    stop,
  };
}
