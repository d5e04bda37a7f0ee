/**
 * The engine search section of --help (`profile --config FILE` with
 * `engine`): the best settings of an LLM serving engine (llama.cpp, vLLM,
 * SGLang, TGI, any command), each variant a server started on loopback and
 * measured over the client loads.
 */
import type { OptionDef } from "../option_types.ts";

const GROUP = "Engine search (--config with engine)" as const;

export const ENGINE: readonly OptionDef[] = [
  {
    name: "engine",
    type: "list",
    structured: true,
    group: GROUP,
    valueName: "YAML",
    commands: ["profile"],
    help:
      "The engine to search, a mapping in the --config file: command (a template with {placeholders}, {port} and {host} filled by inferperf), or preset (llama.cpp, vllm, sglang, tgi), ready ({url: /health, status: 200} or {log: TEXT}, timeout: S), env, warmup (requests after each start, default 2), clear_cache (true: the preset's reset between points), constraints (between parameters: \"ctx_size >= parallel * 512\"), logs (a directory), port; or url (a running engine: remote mode, the client's load only). Each variant's points measure -m over --concurrency-range or --request-rate-range.",
  },
  {
    name: "engine-parameters",
    type: "list",
    structured: true,
    group: GROUP,
    valueName: "YAML",
    commands: ["profile"],
    help:
      "The engine's settings to search, NAME: [values] (or {start, stop, step}): every combination is a variant. A NAME is a {placeholder} of the command, or a flag (-np, --max-num-seqs) appended as NAME VALUE.",
  },
];
