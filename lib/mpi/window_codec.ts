/**
 * A measurement window as bytes, for the collectives of --enable-mpi: the
 * per-request samples as raw doubles (so that merged percentiles are exact),
 * everything else as JSON. Times travel as durations: ranks' clocks differ.
 */
import { LatencyHistogram } from "../measure/histogram.ts";
import type { Samples, TokenWindowData, WindowData } from "../types/results.ts";
import type { ShardFigures } from "./merge.ts";

/** A window, and for a merged one (--shard) the ranks it came from. */
export type CodedWindow = WindowData & { shards?: ShardFigures[] };

const SAMPLE_FIELDS = ["latenciesUs", "correctedLatenciesUs", "sendLagsUs"] as const;

/** The window's counts and sums as they are; times, errors and samples recoded. */
type Header =
  & Pick<
    WindowData,
    | "sendUsSum"
    | "recvUsSum"
    | "waitUsSum"
    | "responseCount"
    | "firstResponseUsSum"
    | "errorCount"
    | "delayedCount"
    | "sendCount"
    | "blockedCount"
    | "cancelledCount"
    | "serverStats"
    | "tokens"
  >
  & {
    durationMs: number;
    startWallNs: string;
    errors: Array<[string, number]>;
    histogram?: string;
    shards?: ShardFigures[];
    /** Sample counts, in SAMPLE_FIELDS order. */
    lengths: number[];
  };

export function encodeWindow(window: CodedWindow): Uint8Array {
  const samples = SAMPLE_FIELDS.map((f) => window[f]);
  const header: Header = {
    durationMs: window.endMs - window.startMs,
    startWallNs: String(window.startWallNs),
    sendUsSum: window.sendUsSum,
    recvUsSum: window.recvUsSum,
    waitUsSum: window.waitUsSum,
    responseCount: window.responseCount,
    ...(window.firstResponseUsSum === undefined
      ? {}
      : { firstResponseUsSum: window.firstResponseUsSum }),
    errorCount: window.errorCount,
    errors: [...window.errors],
    delayedCount: window.delayedCount,
    sendCount: window.sendCount,
    blockedCount: window.blockedCount,
    ...(window.cancelledCount ? { cancelledCount: window.cancelledCount } : {}),
    ...(window.serverStats ? { serverStats: window.serverStats } : {}),
    ...(window.histogram ? { histogram: window.histogram.encode() } : {}),
    ...(window.tokens ? { tokens: window.tokens } : {}),
    ...(window.shards ? { shards: window.shards } : {}),
    lengths: samples.map((s) => s.length),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  // The doubles start on an 8-byte boundary so that the receiver can view them in place.
  const start = Math.ceil((4 + json.length) / 8) * 8;
  const total = samples.reduce((n, s) => n + s.length, 0);
  const out = new Uint8Array(start + total * 8);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  const doubles = new Float64Array(out.buffer, start, total);
  let at = 0;
  for (const s of samples) {
    doubles.set(s, at);
    at += s.length;
  }
  return out;
}

/** Token figures back from JSON, which wrote NaN (no such figure) and undefined texts as null. */
function revivedTokens(tokens: TokenWindowData): TokenWindowData {
  const revived = { ...tokens };
  for (const [key, values] of Object.entries(tokens)) {
    const list = values as unknown[];
    (revived as Record<string, unknown>)[key] = key === "texts" || key === "reasoningTexts"
      ? list.map((v) => v ?? undefined)
      : list.map((v) => v ?? NaN);
  }
  return revived;
}

/** The window `bytes` encode, placed on this process's clock to end at `endMs`. */
export function decodeWindow(bytes: Uint8Array, endMs: number): CodedWindow {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(0, true);
  const header: Header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length)));
  const start = Math.ceil((4 + length) / 8) * 8;
  const total = header.lengths.reduce((n, l) => n + l, 0);
  // A copy: the received buffer may not be 8-byte aligned, and the samples outlive it.
  const doubles = new Float64Array(bytes.slice(start, start + total * 8).buffer);
  const samples: Samples[] = [];
  let at = 0;
  for (const l of header.lengths) {
    samples.push(doubles.subarray(at, at + l));
    at += l;
  }
  return {
    startMs: endMs - header.durationMs,
    endMs,
    startWallNs: BigInt(header.startWallNs),
    latenciesUs: samples[0],
    sendUsSum: header.sendUsSum,
    recvUsSum: header.recvUsSum,
    waitUsSum: header.waitUsSum,
    responseCount: header.responseCount,
    ...(header.firstResponseUsSum === undefined
      ? {}
      : { firstResponseUsSum: header.firstResponseUsSum }),
    errorCount: header.errorCount,
    errors: new Map(header.errors),
    delayedCount: header.delayedCount,
    correctedLatenciesUs: samples[1],
    sendCount: header.sendCount,
    sendLagsUs: samples[2],
    blockedCount: header.blockedCount,
    ...(header.cancelledCount ? { cancelledCount: header.cancelledCount } : {}),
    ...(header.serverStats ? { serverStats: header.serverStats } : {}),
    ...(header.histogram ? { histogram: LatencyHistogram.decode(header.histogram) } : {}),
    ...(header.tokens ? { tokens: revivedTokens(header.tokens) } : {}),
    ...(header.shards ? { shards: header.shards } : {}),
  };
}
