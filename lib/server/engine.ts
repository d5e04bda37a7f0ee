/**
 * The reference server's tunable LLM engine (`inferperf serve --llm-slots N`):
 * a model named `engine` whose settings are the server's own command-line
 * flags, as an engine's are, so that a configuration search has a ground
 * truth. `slots` answers decode at once; more wait in a FIFO queue. A
 * decode step takes `stepMs + stepMsPerSlot x (slots - 1)`, busy or not (an
 * engine padded to its batch: more slots serve more users, each slower); an
 * admitted answer's first token comes after its prompt's prefill
 * (`prefillMsPerToken` per prompt token) and one step, the others one step
 * apart. Its Prometheus figures use vLLM's names, on the HTTP port's
 * /metrics, as vLLM serves them.
 */
import type { ModelConfig } from "./config_types.ts";

/** The model the engine serves. */
export const ENGINE_MODEL = "engine";
/** Context each slot needs at least: a smaller share refuses to start, as an engine does. */
export const MIN_SLOT_CONTEXT = 512;

export interface EngineSettings {
  slots: number;
  /** Tokens of context, shared by the slots. */
  ctxSize: number;
  prefillMsPerToken: number;
  stepMs: number;
  stepMsPerSlot: number;
  /** Output tokens of an answer unless the request's max_tokens says fewer. */
  outputTokens: number;
}

/** Why the engine can not start with `settings`, or undefined. */
export function engineProblem(settings: EngineSettings): string | undefined {
  const share = Math.floor(settings.ctxSize / settings.slots);
  if (share >= MIN_SLOT_CONTEXT) return undefined;
  return `--llm-ctx-size ${settings.ctxSize} leaves each of the ${settings.slots} slots ${share} tokens of context: at least ${MIN_SLOT_CONTEXT} needed`;
}

/** The served model: an LLM whose timing the engine decides (ttft_ms and itl_ms unused). */
export function engineModel(settings: EngineSettings): ModelConfig {
  return {
    name: ENGINE_MODEL,
    llm: { ttft_ms: 0, itl_ms: engineStepMs(settings), output_tokens: settings.outputTokens },
  };
}

/** One decode step, in milliseconds. */
export function engineStepMs(settings: EngineSettings): number {
  return settings.stepMs + settings.stepMsPerSlot * (settings.slots - 1);
}

/** The slots, the queue and the counters of the engine. */
export class SlotEngine {
  readonly settings: EngineSettings;
  readonly stepMs: number;
  #busy = 0;
  readonly #queue: Array<() => void> = [];
  generatedTokens = 0;
  promptTokens = 0;

  constructor(settings: EngineSettings) {
    this.settings = settings;
    this.stepMs = engineStepMs(settings);
  }

  get running(): number {
    return this.#busy;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** Resolves when a slot is free (FIFO), with the function that frees it again (once). */
  async acquire(promptTokens: number): Promise<() => void> {
    if (this.#busy >= this.settings.slots) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    } else this.#busy++;
    this.promptTokens += promptTokens;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      // The slot passes straight to the next in line.
      if (next) next();
      else this.#busy--;
    };
  }

  /** Milliseconds from admission to the first token of a prompt of `promptTokens`. */
  firstTokenMs(promptTokens: number): number {
    return this.settings.prefillMsPerToken * promptTokens + this.stepMs;
  }

  /** The Prometheus text of /metrics, in vLLM's names. */
  metricsText(): string {
    const family = (name: string, type: string, help: string, value: number) =>
      `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{model_name="${ENGINE_MODEL}"} ${value}\n`;
    return [
      family(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        this.generatedTokens,
      ),
      family(
        "vllm:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        this.promptTokens,
      ),
      family(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        this.#busy,
      ),
      family(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        this.#queue.length,
      ),
      family(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        this.#busy / this.settings.slots,
      ),
    ].join("");
  }
}
