/**
 * --shard: the windows every rank measured at the same time merged into one,
 * as if one client had sent the whole load: samples pooled (exact
 * percentiles), counts and sums added, HDR histograms merged. Each rank's
 * own send figures are kept, so that a lagging shard shows.
 */
import { LatencyHistogram, windowHistogram } from "../measure/histogram.ts";
import { percentile } from "../measure/stats.ts";
import type { Samples, TokenWindowData, WindowData } from "../types/results.ts";

/** One rank's part of a merged window. */
export interface ShardFigures {
  rank: number;
  /** Valid requests the rank completed in the window. */
  requestCount: number;
  errorCount: number;
  /** Open loop: sends the rank dispatched, and their lag (dispatch minus due time). */
  sendCount: number;
  sendLagP50Us: number;
  sendLagP99Us: number;
  sendLagMaxUs: number;
  durationMs: number;
}

/** A merged window: WindowData plus the ranks it came from. */
export interface ShardedWindow extends WindowData {
  shards: ShardFigures[];
}

function concat(parts: readonly Samples[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function mergeTokens(parts: readonly (TokenWindowData | undefined)[]): TokenWindowData | undefined {
  const present = parts.filter((t) => t !== undefined);
  if (present.length === 0) return undefined;
  const pool = <K extends keyof TokenWindowData>(key: K) =>
    ([] as unknown[]).concat(...present.map((t) => t[key])) as TokenWindowData[K];
  // Gaps by position add up position by position.
  const byPosition = (key: "gapSumUs" | "gapCount") => {
    const out: number[] = [];
    for (const t of present) t[key].forEach((v, i) => out[i] = (out[i] ?? 0) + v);
    return out;
  };
  return {
    ttftUs: pool("ttftUs"),
    ttstUs: pool("ttstUs"),
    latencyUs: pool("latencyUs"),
    streamUs: pool("streamUs"),
    chunks: pool("chunks"),
    usageTokens: pool("usageTokens"),
    texts: pool("texts"),
    inputTokens: pool("inputTokens"),
    serverInputTokens: pool("serverInputTokens"),
    reasoningUsage: pool("reasoningUsage"),
    cachedTokens: pool("cachedTokens"),
    requestedTokens: pool("requestedTokens"),
    reasoningChunks: pool("reasoningChunks"),
    reasoningTexts: pool("reasoningTexts"),
    sendLagUs: pool("sendLagUs"),
    sendEpochMs: pool("sendEpochMs"),
    gapsUs: pool("gapsUs"),
    gapsPerRequest: pool("gapsPerRequest"),
    gapSumUs: byPosition("gapSumUs"),
    gapCount: byPosition("gapCount"),
  };
}

function shardFigures(window: WindowData, rank: number): ShardFigures {
  const lags = Float64Array.from(window.sendLagsUs).sort();
  const at = (p: number) => lags.length > 0 ? percentile(lags, p) : 0;
  return {
    rank,
    requestCount: window.latenciesUs.length,
    errorCount: window.errorCount,
    sendCount: window.sendCount,
    sendLagP50Us: at(50),
    sendLagP99Us: at(99),
    sendLagMaxUs: lags.length > 0 ? lags[lags.length - 1] : 0,
    durationMs: window.endMs - window.startMs,
  };
}

const sum = (windows: readonly WindowData[], field: (w: WindowData) => number) =>
  windows.reduce((n, w) => n + field(w), 0);

/**
 * `windows` (rank order) merged. The window spans the longest of them (they
 * end together in time windows; count windows end when the last rank's
 * share completes) and takes rank 0's start and server statistics: the
 * server saw every rank's requests.
 */
export function mergeWindows(windows: readonly WindowData[]): ShardedWindow {
  const [first] = windows;
  const durationMs = Math.max(...windows.map((w) => w.endMs - w.startMs));
  const errors = new Map<string, number>();
  for (const w of windows) {
    for (const [message, count] of w.errors) {
      errors.set(message, (errors.get(message) ?? 0) + count);
    }
  }
  const tokens = mergeTokens(windows.map((w) => w.tokens));
  const histograms = windows.some((w) => w.histogram !== undefined);
  return {
    startMs: first.startMs,
    endMs: first.startMs + durationMs,
    startWallNs: first.startWallNs,
    latenciesUs: concat(windows.map((w) => w.latenciesUs)),
    sendUsSum: sum(windows, (w) => w.sendUsSum),
    recvUsSum: sum(windows, (w) => w.recvUsSum),
    waitUsSum: sum(windows, (w) => w.waitUsSum),
    responseCount: sum(windows, (w) => w.responseCount),
    firstResponseUsSum: sum(windows, (w) => w.firstResponseUsSum ?? 0),
    errorCount: sum(windows, (w) => w.errorCount),
    errors,
    delayedCount: sum(windows, (w) => w.delayedCount),
    correctedLatenciesUs: concat(windows.map((w) => w.correctedLatenciesUs)),
    sendCount: sum(windows, (w) => w.sendCount),
    sendLagsUs: concat(windows.map((w) => w.sendLagsUs)),
    blockedCount: sum(windows, (w) => w.blockedCount),
    cancelledCount: sum(windows, (w) => w.cancelledCount ?? 0),
    ...(first.serverStats ? { serverStats: first.serverStats } : {}),
    ...(histograms ? { histogram: LatencyHistogram.merge(windows.map(windowHistogram)) } : {}),
    ...(tokens ? { tokens } : {}),
    shards: windows.map(shardFigures),
  };
}
