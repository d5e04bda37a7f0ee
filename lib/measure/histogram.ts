/**
 * Latency histograms (HdrHistogram): fixed memory whatever the number of
 * requests, mergeable across windows, runs and machines through
 * HdrHistogram's standard compressed encoding. Values are nanoseconds.
 */
import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  JsHistogram,
} from "hdr-histogram-js";
import type { Histogram, HistogramSummary, WindowData } from "../types/results.ts";

/**
 * Three significant digits: a bucket spans at most 1/1024 of its values, so
 * a bucket's midpoint is within 0.05 % of any sample in it.
 */
const SIGNIFICANT_DIGITS = 3;
/** 32-bit counts: 2^31 samples of one value per histogram is far beyond any run. */
const BIT_BUCKET_SIZE = 32;

function asJs(histogram: unknown): JsHistogram {
  // The pure JS implementation: hdr-histogram-js's WebAssembly one needs an async init.
  if (!(histogram instanceof JsHistogram)) {
    throw new TypeError("Expected a JavaScript HdrHistogram, got a WebAssembly one");
  }
  return histogram;
}

const newHistogram = () =>
  asJs(build({
    bitBucketSize: BIT_BUCKET_SIZE,
    numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
    autoResize: true,
    useWebAssembly: false,
  }));

const decodeJs = (encoded: string) =>
  asJs(decodeFromCompressedBase64(encoded, BIT_BUCKET_SIZE, false));

/**
 * Values are recorded into a full counts array (~80 KB for latencies up to
 * seconds); freeze() swaps it for the compressed encoding (a few KB) once a
 * window is over, so the windows of a long run cost little.
 */
export class LatencyHistogram implements Histogram {
  #live: JsHistogram | undefined;
  #encoded: string | undefined;
  #frozenCount = 0;

  constructor(histogram: JsHistogram = newHistogram()) {
    this.#live = histogram;
  }

  /** Reads HdrHistogram's compressed base64 encoding ("HISTF..."), as written by `encode()`. */
  static decode(encoded: string): LatencyHistogram {
    return new LatencyHistogram(decodeJs(encoded));
  }

  /** A histogram of latencies given in microseconds (windows' exact sample arrays). */
  static fromMicroseconds(latenciesUs: ArrayLike<number>): LatencyHistogram {
    const histogram = new LatencyHistogram();
    for (let i = 0; i < latenciesUs.length; i++) histogram.recordMs(latenciesUs[i] / 1000);
    return histogram;
  }

  /** The merge of `histograms` (a new histogram; the inputs are unchanged). */
  static merge(histograms: Iterable<Histogram>): LatencyHistogram {
    const merged = newHistogram();
    // Every Histogram is one of these: windows get theirs from a `newHistogram` that makes them.
    for (const h of histograms) merged.add((h as LatencyHistogram).#read());
    return new LatencyHistogram(merged);
  }

  /** Records one latency given in milliseconds (a performance.now() difference). */
  recordMs(ms: number): void {
    const live = this.#live;
    if (live === undefined) throw new TypeError("A frozen histogram records no more values");
    live.recordValue(ms > 0 ? Math.round(ms * 1e6) : 0);
  }

  /** Keeps only the compressed encoding: reads decode it again; recording is over. */
  freeze(): void {
    const live = this.#live;
    if (live === undefined) return;
    this.#encoded = encodeIntoCompressedBase64(live);
    this.#frozenCount = live.totalCount;
    this.#live = undefined;
  }

  get count(): number {
    return this.#live?.totalCount ?? this.#frozenCount;
  }

  /**
   * Percentiles (0..100) in nanoseconds by perf_analyzer's rule (the sample
   * at ascending index round(p/100 x (n-1))), each the midpoint of that
   * sample's bucket; 0 for an empty histogram. Same order as `ps`.
   */
  percentilesNs(ps: readonly number[]): number[] {
    return percentilesOf(this.#read(), ps);
  }

  /**
   * Count, extremes, mean, standard deviation and `ps` percentiles in one
   * read. Every value is its bucket's midpoint, so a histogram reads the same
   * before and after encoding.
   */
  summary(ps: readonly number[]): HistogramSummary {
    const h = this.#read();
    const empty = h.totalCount === 0;
    return {
      count: h.totalCount,
      minNs: empty ? 0 : h.medianEquivalentValue(h.minNonZeroValue),
      maxNs: empty ? 0 : h.medianEquivalentValue(h.maxValue),
      meanNs: empty ? 0 : h.mean,
      stdDevNs: empty ? 0 : h.stdDeviation,
      percentilesNs: percentilesOf(h, ps),
    };
  }

  /** HdrHistogram's V2 compressed encoding, base64 ("HISTF..."), readable by every HdrHistogram port. */
  encode(): string {
    return this.#encoded ?? encodeIntoCompressedBase64(this.#live!);
  }

  #read(): JsHistogram {
    return this.#live ?? decodeJs(this.#encoded!);
  }
}

function percentilesOf(h: JsHistogram, ps: readonly number[]): number[] {
  for (const p of ps) {
    if (!(p >= 0 && p <= 100)) throw new RangeError(`Percentile "${p}" is outside 0..100`);
  }
  const n = h.totalCount;
  if (n === 0) return ps.map(() => 0);
  const order = ps.map((p, i) => ({ i, rank: Math.floor((p / 100) * (n - 1) + 0.5) }))
    .sort((a, b) => a.rank - b.rank);
  const out = new Array<number>(ps.length);
  const last = h.countsArrayIndex(h.maxValue);
  let next = 0;
  let seen = 0;
  for (let index = 0; index <= last && next < order.length; index++) {
    seen += h.getCountAtIndex(index);
    while (next < order.length && order[next].rank < seen) {
      out[order[next].i] = h.medianEquivalentValue(h.valueFromIndex(index));
      next++;
    }
  }
  return out;
}

/** A window's latency histogram: the recorder's, or one built from its exact samples. */
export function windowHistogram(
  window: Pick<WindowData, "histogram" | "latenciesUs">,
): Histogram {
  return window.histogram ?? LatencyHistogram.fromMicroseconds(window.latenciesUs);
}

/**
 * A window's figures from its histogram, so that windows need not keep their
 * samples: throughput (valid requests x batch size per second) and latency.
 */
export function windowFigures(
  window: WindowData,
  options: { batchSize: number; percentiles: readonly number[] },
): HistogramSummary & { throughput: number } {
  const latency = windowHistogram(window).summary(options.percentiles);
  const seconds = (window.endMs - window.startMs) / 1000;
  return {
    ...latency,
    throughput: seconds > 0 ? (latency.count * options.batchSize) / seconds : 0,
  };
}
