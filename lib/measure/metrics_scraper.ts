/**
 * --collect-metrics: scrapes the server's Prometheus endpoint on a timer of
 * its own (never from the request loop) and hands out the GPU metrics
 * sampled during a level's reported windows, merged as perf_analyzer does;
 * for LLM servers also their token counters and load (llm_server_metrics.ts).
 */
import type { GpuMetrics, LlmServerMetrics } from "../types/results.ts";
import {
  type LlmServerSample,
  llmServerSampleOf,
  summarizeLlmServer,
} from "./llm_server_metrics.ts";
import { mergeGpuMetrics } from "./gpu_metrics.ts";
import { parsePrometheusText, type PrometheusSample } from "./prometheus.ts";
import { type Endpoint, formatAddress, Http1Client } from "../protocol/http1/mod.ts";
import { parseKServeUrl } from "../protocol/kserve_http.ts";
import { ServerFeatureError } from "../protocol/errors.ts";

/** Triton's metrics port, perf_analyzer's default for --metrics-url. */
export const DEFAULT_METRICS_PORT = 8002;
/** A scrape that takes longer than this is abandoned (and warned about). */
const SCRAPE_TIMEOUT_MS = 5000;

/** perf_analyzer's default --metrics-url: the host of -u, port 8002, /metrics. */
export function defaultMetricsUrl(serverUrl: string): string {
  const { hostname } = parseKServeUrl(serverUrl).endpoint;
  return `${formatAddress(hostname, DEFAULT_METRICS_PORT)}/metrics`;
}

/** An OpenAI-compatible server's metrics (llama.cpp, vLLM, SGLang): -u's host and port, /metrics. */
export function llmMetricsUrl(serverUrl: string): string {
  const { hostname, port, tls } = parseKServeUrl(serverUrl).endpoint;
  return `${tls ? "https://" : ""}${formatAddress(hostname, port)}/metrics`;
}

/** "host:port/path" or "http(s)://host[:port]/path"; throws RangeError naming the URL. */
export function parseMetricsUrl(url: string): { endpoint: Endpoint; path: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new RangeError(`Invalid metrics URL "${url}": expected host:port/path`);
  }
  const secure = parsed.protocol === "https:";
  if (!secure && parsed.protocol !== "http:") {
    throw new RangeError(`Invalid metrics URL "${url}": only http and https are supported`);
  }
  const hostname = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = parsed.port === "" ? (secure ? 443 : 80) : Number(parsed.port);
  return {
    endpoint: {
      hostname,
      port,
      connectTimeoutMs: SCRAPE_TIMEOUT_MS,
      requestTimeoutMs: SCRAPE_TIMEOUT_MS,
      ...(secure ? { tls: {} } : {}),
    },
    path: `${parsed.pathname}${parsed.search}`,
  };
}

const GPU_FAMILIES: Record<string, keyof GpuMetrics> = {
  nv_gpu_utilization: "utilization",
  nv_gpu_power_usage: "powerWatts",
  nv_gpu_memory_used_bytes: "memoryUsedBytes",
  nv_gpu_memory_total_bytes: "memoryTotalBytes",
};

/** The nv_gpu_* gauges of one scrape, per `gpu_uuid` label. */
export function gpuMetricsOf(samples: readonly PrometheusSample[]): GpuMetrics {
  const metrics: GpuMetrics = {
    utilization: new Map(),
    powerWatts: new Map(),
    memoryUsedBytes: new Map(),
    memoryTotalBytes: new Map(),
  };
  for (const sample of samples) {
    const key = GPU_FAMILIES[sample.name];
    const uuid = sample.labels.gpu_uuid;
    if (key !== undefined && uuid !== undefined) metrics[key].set(uuid, sample.value);
  }
  return metrics;
}

export interface MetricsScraperOptions {
  /** Milliseconds between the starts of two scrapes (--metrics-interval). */
  intervalMs: number;
  /** Called once, for the first failed scrape (the first of all unless `strict`); later failures are silent. */
  onWarning?: (message: string) => void;
}

interface Scrape {
  /** performance.now() when the response arrived. */
  atMs: number;
  metrics: GpuMetrics;
  llm: LlmServerSample | undefined;
}

const decoder = new TextDecoder();

export class MetricsScraper {
  readonly url: string;
  readonly #endpoint: Endpoint;
  readonly #path: string;
  readonly #options: MetricsScraperOptions;
  #client: Http1Client;
  #scrapes: Scrape[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #inFlight: Promise<void> | undefined;
  #warned = false;
  #failure: string | undefined;
  #closed = false;

  constructor(url: string, options: MetricsScraperOptions) {
    const { endpoint, path } = parseMetricsUrl(url);
    this.url = url;
    this.#endpoint = endpoint;
    this.#path = path;
    this.#options = options;
    this.#client = new Http1Client(endpoint);
  }

  /**
   * Scrapes now, then every interval until close(). A first scrape that fails
   * warns once and scraping goes on (perf_analyzer measures on then, its GPU
   * metrics empty); with `strict` it rejects instead, with one line naming
   * the URL: the server has no metrics endpoint there (Triton started or
   * built without metrics), and GPU figures could never be reported.
   */
  async start(options: { strict?: boolean } = {}): Promise<void> {
    if (this.#closed || this.#inFlight || this.#timer !== undefined) return;
    const started = performance.now();
    try {
      await this.#read();
    } catch (error) {
      if (options.strict) {
        throw new ServerFeatureError(
          `--collect-metrics: cannot read server metrics from "${this.url}": ${reasonOf(error)} ` +
            "(a server without a metrics endpoint cannot report GPU metrics; set --metrics-url, " +
            "or run without --collect-metrics or --require-metrics)",
        );
      }
      this.#warn(error);
    }
    this.#schedule(started);
  }

  /**
   * Why the latest scrape failed ("cannot read server metrics from URL:
   * reason"); undefined while the endpoint answers (or before any scrape).
   */
  get failure(): string | undefined {
    return this.#failure;
  }

  /**
   * The merge of the scrapes taken from `fromMs` to `toMs` (performance.now()
   * times), or undefined when none was. Scrapes before `fromMs` are dropped:
   * levels only move forward.
   */
  take(fromMs: number, toMs: number): GpuMetrics | undefined {
    this.#scrapes = this.#scrapes.filter((s) => s.atMs >= fromMs);
    const inRange = this.#scrapes.filter((s) => s.atMs <= toMs).map((s) => s.metrics);
    return inRange.length > 0 ? mergeGpuMetrics(inRange) : undefined;
  }

  /**
   * An LLM server's figures from `fromMs` to `toMs`: counters from the last
   * scrape at or before the start to the first at or after the end (a
   * --request-count level scrapes at both: scrapeNow), gauges in between;
   * undefined without both ends. Call before take(), which drops the start's.
   */
  takeLlm(fromMs: number, toMs: number): LlmServerMetrics | undefined {
    const llm = this.#scrapes.filter((s) => s.llm !== undefined);
    const before = llm.findLast((s) => s.atMs <= fromMs);
    const after = llm.find((s) => s.atMs >= toMs);
    if (before === undefined || after === undefined) return undefined;
    const during = llm.filter((s) => s.atMs > fromMs && s.atMs < toMs).map((s) => s.llm!);
    return summarizeLlmServer(before.llm!, during, after.llm!);
  }

  /** Whether the latest scrape held an LLM server's figures. */
  get llmServer(): boolean {
    return this.#scrapes.at(-1)?.llm !== undefined;
  }

  /** One scrape now, beside the timer's (a level's boundary); a failure only warns. */
  async scrapeNow(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#read();
    } catch (error) {
      this.#warn(error);
    }
  }

  /** Stops scraping and waits for a scrape in flight to end. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#client.close();
    await this.#inFlight;
  }

  /** One scrape into #scrapes; throws when the endpoint cannot be read. */
  async #read(): Promise<void> {
    try {
      const response = await this.#client.request("GET", this.#path);
      if (response.status !== 200) {
        throw new Error(`the server answered ${response.status}`);
      }
      const samples = parsePrometheusText(decoder.decode(response.body));
      this.#scrapes.push({
        atMs: performance.now(),
        metrics: gpuMetricsOf(samples),
        llm: llmServerSampleOf(samples),
      });
      this.#failure = undefined;
    } catch (error) {
      this.#failure = `cannot read server metrics from "${this.url}": ${reasonOf(error)}`;
      // The connection may be broken: the next scrape starts afresh.
      this.#client.close();
      this.#client = new Http1Client(this.#endpoint);
      throw error;
    }
  }

  /** The next scrape, one interval after `started`. */
  #schedule(started: number): void {
    if (this.#closed) return;
    const delay = Math.max(0, this.#options.intervalMs - (performance.now() - started));
    this.#timer = setTimeout(() => {
      this.#inFlight = this.#scrape();
    }, delay);
  }

  async #scrape(): Promise<void> {
    this.#timer = undefined;
    const started = performance.now();
    try {
      await this.#read();
    } catch (error) {
      if (this.#closed) return;
      this.#warn(error);
    }
    this.#schedule(started);
  }

  #warn(error: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#options.onWarning?.(
      `Cannot collect server metrics from "${this.url}": ${reasonOf(error)}. ` +
        "Measuring continues without them (levels without metrics say so).",
    );
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
