/**
 * Triton's trace extension on the wire, for the clients and the reference
 * server alike: the JSON object of `/v2/trace/setting` (trace_level a list of
 * strings, every other setting one string) and the gRPC `settings` maps of
 * SettingValue messages.
 */
import { ProtocolError } from "./errors.ts";
import type { TraceSettings } from "./types.ts";

/** The levels of Triton's "trace_level" setting. */
export const TRACE_LEVELS: readonly string[] = ["OFF", "TIMESTAMPS", "TENSORS"];

/** Settings whose JSON value is a list even with one value. */
const LIST_SETTINGS: ReadonlySet<string> = new Set(["trace_level"]);

/** The JSON object of a trace setting request or response. */
export function traceSettingsToJson(
  settings: Readonly<TraceSettings>,
): Record<string, string | string[]> {
  const json: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(settings)) {
    json[name] = values.length === 1 && !LIST_SETTINGS.has(name) ? values[0] : [...values];
  }
  return json;
}

/** The settings of a trace setting JSON response; a value of another shape is a ProtocolError. */
export function traceSettingsFromJson(value: unknown): TraceSettings {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProtocolError("Expected a JSON object of trace settings");
  }
  const settings: TraceSettings = {};
  for (const [name, v] of Object.entries(value)) {
    const values: unknown[] = Array.isArray(v) ? v : [v];
    if (!values.every((s) => typeof s === "string")) {
      throw new ProtocolError(
        `Expected a string or a list of strings for trace setting "${name}", got ${
          JSON.stringify(v)
        }`,
      );
    }
    settings[name] = values as string[];
  }
  return settings;
}

/** A SettingValue message: TraceSettingRequest and TraceSettingResponse each nest one. */
export interface SettingValueFields {
  value?: string[];
}

/** The `settings` map of a TraceSettingRequest or TraceSettingResponse. */
export function traceSettingsToGrpc(
  settings: Readonly<TraceSettings>,
): Record<string, SettingValueFields> {
  const map: Record<string, SettingValueFields> = {};
  for (const [name, values] of Object.entries(settings)) map[name] = { value: [...values] };
  return map;
}

/** The settings of a decoded `settings` map (an absent list is an empty one). */
export function traceSettingsFromGrpc(
  map: Readonly<Record<string, SettingValueFields>> | undefined,
): TraceSettings {
  const settings: TraceSettings = {};
  for (const [name, setting] of Object.entries(map ?? {})) {
    settings[name] = [...setting.value ?? []];
  }
  return settings;
}
