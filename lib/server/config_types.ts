/** The reference server's model configuration: what each simulated model looks like and does. */
import type { Datatype } from "../types/datatype.ts";
import type { FaultConfig, FaultSpec } from "./faults.ts";

export const BEHAVIOUR_KINDS = ["add_sub", "identity", "zeros", "accumulate", "bls"] as const;
/**
 * - add_sub: like Triton's `simple`; OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1.
 * - accumulate: a sequence model; the output is the element-wise sum of every input of the
 *   sequence so far (needs sequence_batching), so a client's sequence mistakes show.
 * - identity: each output echoes the input at the same position.
 * - zeros: zero-filled outputs; -1 dims take the value of the input at the same position.
 * - bls: a BLS model (a Python model calling others by name): each request goes through
 *   `bls_models` in order, in this server, each call scheduled as the model's own requests are
 *   (its instances, batching and queue); an instance of the BLS model is held until its requests
 *   have come back, as a Python model's execute() blocks on its BLS calls. Each call's inputs
 *   are the previous step's outputs (the request's inputs first), by position.
 */
export type BehaviourKind = typeof BEHAVIOUR_KINDS[number];

export const DISTRIBUTIONS = ["uniform", "normal", "exponential"] as const;
export type DistributionKind = typeof DISTRIBUTIONS[number];

/** A random compute time; samples are clamped to [min_ms, max_ms]. */
export interface ComputeDistribution {
  dist: DistributionKind;
  mean_ms: number;
  /** Required for normal; uniform defaults to the range [0, 2 x mean]; unused by exponential. */
  stddev_ms?: number;
  min_ms?: number;
  max_ms?: number;
}

export interface TensorConfig {
  name: string;
  datatype: Datatype;
  /** Without the batch dimension; -1 marks a variable dimension. */
  dims: number[];
}

export interface DynamicBatchingConfig {
  max_queue_delay_ms: number;
  preferred_batch_sizes?: number[];
}

/** A stateful model: requests carry sequence_id, sequence_start and sequence_end. */
export interface SequenceBatchingConfig {
  /** A sequence without requests for this long is released, as Triton does. Default 1000. */
  max_sequence_idle_ms?: number;
  /**
   * Accept string correlation ids, as Triton does only for a model whose
   * sequence batcher declares a TYPE_STRING CONTROL_SEQUENCE_CORRID input.
   * Default false: unsigned integers only.
   */
  string_ids?: boolean;
}

/**
 * A decoupled model (model_transaction_policy.decoupled): each request gets
 * `responses` responses over the gRPC stream, the first when the compute ends
 * and each further one `gap_ms` later.
 */
export interface DecoupledConfig {
  responses: number;
  /** Default 0. */
  gap_ms?: number;
}

/**
 * A token-streaming model served on the OpenAI-compatible endpoints
 * (/v1/chat/completions, /v1/completions, /v1/embeddings) and Triton's
 * generate extension: the first token `ttft_ms` after the request arrives,
 * then one every `itl_ms` (each +- up to `itl_jitter_ms`, uniform), `output_tokens`
 * in all (normal with `output_tokens_stddev`; fewer when the request's
 * max_tokens says so; exactly max_tokens with ignore_eos, at least min_tokens).
 */
export interface LlmConfig {
  ttft_ms: number;
  itl_ms: number;
  output_tokens: number;
  /**
   * Close the connection after each streamed answer without announcing it, as
   * some servers (llama.cpp) do. Default false.
   */
  close_after_stream?: boolean;
  /** Default 0. Each token moves by up to this much (not the gaps), so at most itl_ms / 2. */
  itl_jitter_ms?: number;
  /** Default 0: every answer has output_tokens tokens. */
  output_tokens_stddev?: number;
  /** Send usage (with stream_options.include_usage when streaming). Default true. */
  usage?: boolean;
  /**
   * Fraction of streamed answers that fail after `error_after_tokens` tokens
   * (default 1), evenly spread: with an `error` event (`error_kind: event`, the
   * default), a dropped connection (`abort`) or an end without [DONE]
   * (`truncate`). Default 0.
   */
  error_rate?: number;
  error_after_tokens?: number;
  error_kind?: LlmErrorKind;
  /**
   * Prompt tokens a chat template adds in `usage` (chat endpoint only), as
   * real servers count the template's tokens with the prompt's. Default 28:
   * llama.cpp's for the LLaMA chat template of ../shared/llama's model.
   */
  chat_template_tokens?: number;
  /**
   * The first this many tokens of each chat answer are reasoning
   * (`reasoning_content` deltas, as llama.cpp and vLLM send a thinking
   * model's), counted in completion_tokens like theirs. Default 0.
   */
  reasoning_tokens?: number;
}

export const LLM_ERROR_KINDS = ["event", "abort", "truncate"] as const;
export type LlmErrorKind = typeof LLM_ERROR_KINDS[number];

export interface LlmSpec {
  ttftMs: number;
  itlMs: number;
  itlJitterMs: number;
  outputTokens: number;
  outputTokensStddev: number;
  closeAfterStream: boolean;
  usage: boolean;
  errorRate: number;
  errorAfterTokens: number;
  errorKind: LlmErrorKind;
  chatTemplateTokens: number;
  reasoningTokens: number;
}

/** Triton's default max_sequence_idle_microseconds, in milliseconds. */
export const DEFAULT_SEQUENCE_IDLE_MS = 1000;

/** One model as written in a configuration file (snake_case, like Triton's). */
export interface ModelConfig {
  name: string;
  /** Default ["1"]. */
  versions?: string[];
  /** Default "simulated". */
  platform?: string;
  /** 0 (the default) disables batching. */
  max_batch_size?: number;
  /** Required unless `llm` is set. */
  inputs?: TensorConfig[];
  /** Required unless `llm` is set. */
  outputs?: TensorConfig[];
  /** Required unless `llm` is set (then "identity"). */
  kind?: BehaviourKind;
  /** Compute time of one execution (one batch): fixed milliseconds or a distribution. Default 0. */
  compute_ms?: number | ComputeDistribution;
  compute_input_ms?: number;
  compute_output_ms?: number;
  /** Executions that can run at once; further requests queue FIFO. Default 1. */
  instances?: number;
  dynamic_batching?: DynamicBatchingConfig;
  sequence_batching?: SequenceBatchingConfig;
  decoupled?: DecoupledConfig;
  /**
   * Serve the model as an LLM on the OpenAI-compatible endpoints. `inputs`,
   * `outputs` and `kind` may then be left out: a BYTES text_input echoed to
   * text_output.
   */
  llm?: LlmConfig;
  /** Injected faults for tests (see faults.ts). */
  faults?: FaultConfig;
  /** kind "bls": the models each request calls, in order, by name. */
  bls_models?: string[];
}

/** A validated model configuration with every default filled in. */
export interface ModelSpec {
  name: string;
  versions: string[];
  platform: string;
  maxBatchSize: number;
  inputs: TensorConfig[];
  outputs: TensorConfig[];
  kind: BehaviourKind;
  compute: number | ComputeDistribution;
  computeInputMs: number;
  computeOutputMs: number;
  instances: number;
  dynamicBatching?: { maxQueueDelayMs: number; preferredBatchSizes: number[] };
  sequence?: { maxSequenceIdleMs: number; stringIds: boolean };
  decoupled?: { responses: number; gapMs: number };
  llm?: LlmSpec;
  faults?: FaultSpec;
  blsModels?: string[];
}

/** Every problem of a configuration at once, each naming the model and field. */
export class ModelConfigError extends TypeError {
  override name = "ModelConfigError";
  constructor(readonly source: string, readonly problems: string[]) {
    super(
      `Invalid model configuration "${source}" (${problems.length} ${
        problems.length === 1 ? "problem" : "problems"
      }):\n  ${problems.join("\n  ")}`,
    );
  }
}
