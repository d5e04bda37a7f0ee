/**
 * --trace-level, --trace-rate, --trace-count and --log-frequency: the
 * server's global trace settings, updated through Triton's trace extension
 * before the load starts, as perf_analyzer does.
 */
import type { ProfilePlan, TraceConfig } from "./plan.ts";
import { ServerFeatureError } from "../protocol/errors.ts";
import { hasTraceControl, type InferenceClient, type TraceSettings } from "../protocol/types.ts";
import type { ServerInfo } from "../types/model.ts";

/** The trace extension's settings that `trace` sets (integers as strings, as Triton takes them). */
export function traceSettingsOf(trace: TraceConfig): TraceSettings {
  const settings: TraceSettings = {};
  if (trace.levels.length > 0) settings.trace_level = [...trace.levels];
  if (trace.rate !== undefined) settings.trace_rate = [String(trace.rate)];
  if (trace.count !== undefined) settings.trace_count = [String(trace.count)];
  if (trace.logFrequency !== undefined) settings.log_frequency = [String(trace.logFrequency)];
  return settings;
}

/**
 * Updates the server's trace settings as the run's options ask. Resolves to
 * every setting then in effect, or to undefined when no option asks.
 */
export async function updateTraceSettings(
  client: InferenceClient,
  options: { config: ProfilePlan; server: ServerInfo },
): Promise<TraceSettings | undefined> {
  const { config, server } = options;
  if (config.trace === undefined) return undefined;
  if (!hasTraceControl(client) || !server.extensions.includes("trace")) {
    throw new ServerFeatureError(
      `Trace settings (--trace-*, --log-frequency) need a server with Triton's trace ` +
        `extension; "${server.name || config.url}" does not list "trace"`,
    );
  }
  return await client.updateTraceSettings(traceSettingsOf(config.trace));
}
