/** The models the reference server runs when given no configuration (inferperf demo, tests). */
import { type Datatype, DATATYPES } from "../types/datatype.ts";
import type { ModelConfig, TensorConfig } from "./config_types.ts";

const INT32_16: TensorConfig[] = [
  { name: "INPUT0", datatype: "INT32", dims: [16] },
  { name: "INPUT1", datatype: "INT32", dims: [16] },
];

/** An identity model: each OUTPUT<suffix> echoes INPUT<suffix>. */
function identityModel(
  name: string,
  tensors: Array<{ suffix: string; datatype: Datatype; dims: number[] }>,
  options: { maxBatchSize: number },
): ModelConfig {
  const named = (prefix: string) =>
    tensors.map((t) => ({ name: prefix + t.suffix, datatype: t.datatype, dims: t.dims }));
  return {
    name,
    max_batch_size: options.maxBatchSize,
    kind: "identity",
    inputs: named("INPUT"),
    outputs: named("OUTPUT"),
  };
}

const BATCHING = { maxBatchSize: 8 };

/**
 * Models whose outputs input data and validation tests know: every datatype
 * with variable dims, and the models of perf_analyzer's input data examples.
 */
const INPUT_DATA_MODELS: readonly ModelConfig[] = [
  identityModel(
    "identity_all",
    DATATYPES.map((datatype) => ({ suffix: `_${datatype}`, datatype, dims: [-1] })),
    BATCHING,
  ),
  {
    // Outputs in this order make OUTPUT0 = INPUT0 - INPUT1 and OUTPUT1 = INPUT0 + INPUT1, the
    // values of perf_analyzer's validation_data example.
    name: "sub_add",
    max_batch_size: 8,
    kind: "add_sub",
    inputs: [
      { name: "INPUT0", datatype: "INT32", dims: [4, 4] },
      { name: "INPUT1", datatype: "INT32", dims: [4, 4] },
    ],
    outputs: [
      { name: "OUTPUT1", datatype: "INT32", dims: [4, 4] },
      { name: "OUTPUT0", datatype: "INT32", dims: [4, 4] },
    ],
  },
  identityModel(
    "identity_uint8",
    ["0", "1"].map((suffix) => ({ suffix, datatype: "UINT8", dims: [-1] })),
    BATCHING,
  ),
  identityModel("identity_int32", [{ suffix: "", datatype: "INT32", dims: [-1, -1] }], {
    maxBatchSize: 0,
  }),
  identityModel("identity_string", [{ suffix: "", datatype: "BYTES", dims: [1] }], BATCHING),
  identityModel("identity_image", [{ suffix: "", datatype: "UINT8", dims: [-1] }], BATCHING),
];

/** The models served when no configuration file is given. */
export const DEFAULT_MODELS: readonly ModelConfig[] = [
  {
    name: "simple",
    max_batch_size: 8,
    kind: "add_sub",
    inputs: INT32_16,
    outputs: [
      { name: "OUTPUT0", datatype: "INT32", dims: [16] },
      { name: "OUTPUT1", datatype: "INT32", dims: [16] },
    ],
  },
  {
    name: "slow",
    kind: "identity",
    compute_ms: 10,
    instances: 1,
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
  },
  {
    name: "identity_fp32",
    max_batch_size: 8,
    kind: "identity",
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [-1] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [-1] }],
  },
  {
    name: "batched",
    max_batch_size: 8,
    kind: "identity",
    compute_ms: 5,
    instances: 1,
    dynamic_batching: { max_queue_delay_ms: 2, preferred_batch_sizes: [4, 8] },
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
  },
  {
    // Answers each streamed request with 5 responses 2 ms apart, like a token stream.
    name: "decoupled",
    kind: "identity",
    compute_ms: 1,
    instances: 4,
    decoupled: { responses: 5, gap_ms: 2 },
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
  },
  {
    // An LLM on the OpenAI-compatible endpoints: 20 ms to the first token, then one every 5 ms.
    name: "llm",
    instances: 4,
    llm: { ttft_ms: 20, itl_ms: 5, output_tokens: 32 },
  },
  ...INPUT_DATA_MODELS,
];
