/**
 * Which search a command line asks for: main.ts reads it at every start, so it imports nothing
 * (the searches, their settings and field tables load when one runs).
 */
import type { RawOptions } from "../cli/options.ts";

/** Whether `raw` asks for an engine search (engine_config.ts). */
export function isEngineSearch(raw: RawOptions): boolean {
  return raw.has("engine");
}

/** Whether `raw` asks for a model configuration search rather than a sweep or one run. */
export function isSearch(raw: RawOptions): boolean {
  return raw.has("profile-models") && raw.has("model-repository") &&
    raw.get("service-kind") !== "triton_c_api";
}
