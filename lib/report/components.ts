/**
 * Where a level's average latency goes, split as perf_analyzer's CSV columns
 * split it (and its spreadsheet stacks them). Microseconds, unrounded.
 */
import { STABILITY_WINDOWS } from "../measure/stability.ts";
import type { LevelResult, ServerSummary, WindowData } from "../types/results.ts";

export interface LatencyComponents {
  clientSendUs: number;
  /** Network+Server Send/Recv: the client's wait minus the server's accounted time, floored at 0. */
  networkUs: number;
  serverQueueUs: number;
  serverComputeInputUs: number;
  serverComputeInferUs: number;
  serverComputeOutputUs: number;
  serverCacheHitUs: number;
  serverCacheMissUs: number;
  clientRecvUs: number;
}

/** Server time perf_analyzer accounts for: queue, compute and cache lookups. */
export function accountedUs(s: ServerSummary): number {
  return s.queueUs + s.computeInputUs + s.computeInferUs + s.computeOutputUs + s.cacheHitUs +
    s.cacheMissUs;
}

/** Without server statistics the server parts are 0 and the network part holds the whole wait. */
export function latencyComponents(
  result: Pick<LevelResult, "client" | "server">,
): LatencyComponents {
  const c = result.client;
  const s = result.server?.[0];
  // Client wait minus server time mixes two clocks, so it can come out negative: floored.
  const waitUs = c.avgLatencyUs - c.avgSendUs - c.avgRecvUs;
  return {
    clientSendUs: c.avgSendUs,
    networkUs: Math.max(0, waitUs - (s ? accountedUs(s) : 0)),
    serverQueueUs: s?.queueUs ?? 0,
    serverComputeInputUs: s?.computeInputUs ?? 0,
    serverComputeInferUs: s?.computeInferUs ?? 0,
    serverComputeOutputUs: s?.computeOutputUs ?? 0,
    serverCacheHitUs: s?.cacheHitUs ?? 0,
    serverCacheMissUs: s?.cacheMissUs ?? 0,
    clientRecvUs: c.avgRecvUs,
  };
}

/**
 * The windows a level's `client` figures summarize: the last three (the
 * stable ones, or the last tried), or the single --request-count window.
 */
export function reportedWindows(result: Pick<LevelResult, "windows">): WindowData[] {
  return result.windows.slice(-STABILITY_WINDOWS);
}
