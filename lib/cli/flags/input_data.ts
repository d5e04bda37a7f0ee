/** The Input data section of --help: What the requests carry. */
import { DEFAULT_TOKENIZER, TOKENIZER_NAMES } from "../../input/tokenizer.ts";
import type { OptionDef } from "../option_types.ts";

export const INPUT_DATA: readonly OptionDef[] = [
  {
    name: "input-data",
    perfAnalyzer: true,
    type: "list",
    group: "Input data",
    valueName: "MODE|PATH",
    sweep: "list",
    help:
      'Data to send, repeatable. random (default) or zero: generated once per input and reused. NAME:random, NAME:zero or NAME:random:MIN:MAX: generated data of one input (e.g. token ids in range); next to files it gives an input they leave out. A directory: one raw batch-1 file per input named after it (BYTES: one string per line), optional files named after outputs to validate. FILE.json: perf_analyzer\'s {"data": [...], "validation_data": [...]}; several files combine. -b N takes N consecutive steps per request.',
  },
  {
    name: "batch-size",
    short: "b",
    type: "int",
    default: 1,
    group: "Input data",
    sweep: "range",
    help: "Batch size of each request.",
  },
  {
    name: "shape",
    perfAnalyzer: true,
    type: "list",
    group: "Input data",
    valueName: "NAME:D1,D2",
    help: "Shape of an input without the batch dimension; required for -1 dims. Repeatable.",
  },
  {
    name: "string-length",
    perfAnalyzer: true,
    type: "int",
    default: 128,
    group: "Input data",
    help: "Length of random strings for BYTES inputs.",
  },
  {
    name: "string-data",
    perfAnalyzer: true,
    type: "string",
    group: "Input data",
    help: "String sent in every element of BYTES inputs.",
  },
  {
    name: "validation-tolerance",
    type: "float",
    default: 0,
    group: "Input data",
    valueName: "X",
    help:
      "Output validation (validation_data): float outputs may differ from the expected values by X x max(1, |expected|); 0 compares bytes like perf_analyzer. Integers, BOOL and BYTES compare exactly.",
  },
  {
    name: "shared-memory",
    perfAnalyzer: true,
    type: "string",
    default: "none",
    group: "Input data",
    choices: ["none", "system", "cuda"],
    help:
      "Pass tensors through shared memory registered with the server (Triton, HTTP or gRPC): system is POSIX shared memory (/dev/shm); cuda needs a CUDA GPU and is not supported.",
  },
  {
    name: "output-shared-memory-size",
    perfAnalyzer: true,
    type: "int",
    default: 102400,
    group: "Input data",
    help:
      "Bytes of shared memory reserved per batch element for each output of variable size (a -1 dim, BYTES); fixed-size outputs are sized from the model, as perf_analyzer does.",
  },
  {
    name: "synthetic-input-tokens-mean",
    type: "int",
    default: 550,
    group: "Input data",
    valueName: "N",
    help:
      "Synthetic prompts (--service-kind openai without --input-data): N tokens of --tokenizer on average (words with --tokenizer none).",
  },
  {
    name: "synthetic-input-tokens-stddev",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Standard deviation of the synthetic prompt length, in tokens.",
  },
  {
    name: "output-tokens-mean",
    type: "int",
    group: "Input data",
    valueName: "N",
    help:
      "The max_tokens of generated requests, normal around N (--output-tokens-stddev). Default: the server's choice.",
  },
  {
    name: "output-tokens-stddev",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Standard deviation of max_tokens (with --output-tokens-mean).",
  },
  {
    name: "output-tokens-mean-deterministic",
    type: "boolean",
    group: "Input data",
    help:
      "Also send min_tokens and ignore_eos (vLLM, TensorRT-LLM), so answers have exactly max_tokens tokens.",
  },
  {
    name: "num-prompts",
    type: "int",
    default: 100,
    group: "Input data",
    valueName: "N",
    help:
      "Distinct synthetic prompts, sent round-robin (with --streaming they ask for a streamed answer).",
  },
  {
    name: "input-file",
    type: "string",
    group: "Input data",
    valueName: "FILE.jsonl",
    help:
      'Prompts for --service-kind openai, genai-perf\'s format: one {"text": "..."} per line, sent round-robin; other formats with --custom-dataset-type or --public-dataset.',
  },
  {
    name: "custom-dataset-type",
    type: "string",
    group: "Input data",
    choices: ["single_turn", "multi_turn", "random_pool", "mooncake_trace"],
    help:
      'How --input-file reads (AIPerf\'s formats, JSONL): single_turn ({"text"} per line; "timestamp" for --fixed-schedule), multi_turn ({"session_id", "turns": [...]}, each turn\'s "delay"), random_pool (--conversation-num lines drawn at random; a directory: one pool per file) or mooncake_trace ("timestamp", "input_length", "output_length", "hash_ids": blocks of --synthetic-input-tokens-block-size shared by hash id; replayed at its timestamps). Default: single_turn.',
  },
  {
    name: "public-dataset",
    type: "string",
    group: "Input data",
    choices: ["sharegpt"],
    help:
      "Read --input-file as this public dataset, a local copy (nothing is downloaded): sharegpt is ShareGPT's JSON (first message the prompt, the answer's length max_tokens; AIPerf's length filter).",
  },
  {
    name: "conversation-num",
    type: "int",
    group: "Input data",
    valueName: "N",
    help:
      "Synthetic conversations (AIPerf's; like --num-prompts, which it replaces), or the entries drawn from a random_pool file.",
  },
  {
    name: "conversation-turn-mean",
    type: "int",
    group: "Input data",
    valueName: "N",
    help:
      "Turns per synthetic conversation, normal around N (default 1); more than one needs --session-concurrency: each turn carries the history.",
  },
  {
    name: "conversation-turn-stddev",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Standard deviation of the turns per synthetic conversation.",
  },
  {
    name: "conversation-turn-delay-mean",
    type: "float",
    default: 0,
    group: "Input data",
    valueName: "MS",
    help: "Wait after an answer before a conversation's next turn, normal around MS.",
  },
  {
    name: "conversation-turn-delay-stddev",
    type: "float",
    default: 0,
    group: "Input data",
    valueName: "MS",
    help: "Standard deviation of the wait between turns.",
  },
  {
    name: "conversation-turn-delay-ratio",
    type: "float",
    default: 1,
    group: "Input data",
    valueName: "R",
    help: "Scales every wait between turns (synthetic conversations).",
  },
  {
    name: "prefix-prompt-pool-size",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help:
      "N shared prefixes of --prefix-prompt-length tokens; the first turn of each synthetic conversation starts with one drawn at random (prefix-cache studies; AIPerf's --num-prefix-prompts).",
  },
  {
    name: "prefix-prompt-length",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Tokens of each shared prefix (with --prefix-prompt-pool-size).",
  },
  {
    name: "sequence-distribution",
    type: "string",
    group: "Input data",
    valueName: "MIX",
    help:
      'Input/output length mix of synthetic prompts (AIPerf\'s): "ISL,OSL:PERCENT;..." with an optional |STDDEV after a length, e.g. "128,64:70;512|20,256:30"; also "[(128,64):70,...]" or JSON {"pairs": [{"isl", "osl", "prob"}]}. Each request draws a pair; OSL is its max_tokens.',
  },
  {
    name: "synthetic-input-tokens-block-size",
    type: "int",
    default: 512,
    group: "Input data",
    valueName: "N",
    help: "Tokens per hash id block of a mooncake_trace (AIPerf's default 512).",
  },
  {
    name: "random-seed",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Seed of synthetic prompts and output lengths: the same seed sends the same requests.",
  },
  {
    name: "tokenizer",
    type: "string",
    default: DEFAULT_TOKENIZER,
    group: "Input data",
    choices: TOKENIZER_NAMES,
    help:
      "Counts tokens of prompts, and of answers without a usage field: llama (LLaMA's BPE, genai-perf's default), cl100k_base (GPT-4's) or none (counted chunks). Built in; nothing is downloaded.",
  },
  {
    name: "input-tensor-format",
    perfAnalyzer: true,
    type: "string",
    default: "binary",
    group: "Input data",
    choices: ["binary", "json"],
    ignoreCase: true,
    help: "Encoding of input tensors over HTTP.",
  },
  {
    name: "output-tensor-format",
    perfAnalyzer: true,
    type: "string",
    default: "binary",
    group: "Input data",
    choices: ["binary", "json"],
    ignoreCase: true,
    help: "Encoding of output tensors over HTTP.",
  },
];
