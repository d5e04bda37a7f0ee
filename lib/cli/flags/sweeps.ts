/** The Sweeps section of --help: --profile-models: the dimensions and goals of a sweep. */
import type { OptionDef } from "../option_types.ts";

export const SWEEPS: readonly OptionDef[] = [
  {
    name: "profile-models",
    type: "comma-list",
    structured: true,
    group: "Sweeps (--profile-models)",
    valueName: "A,B",
    commands: ["profile"],
    help:
      "Sweep these models: every combination of the values of the options marked [sweep] is measured as one point and saved to a checkpoint, so a rerun resumes. With --model-repository: search the best model configuration of each (see Model config search).",
  },
  {
    name: "checkpoint-directory",
    type: "string",
    default: "checkpoints",
    group: "Sweeps (--profile-models)",
    valueName: "DIR",
    commands: ["profile", "report"],
    help:
      "Folder of the sweep checkpoints 0.ckpt, 1.ckpt, ...: the latest is loaded and measured points are skipped. Remove it to start afresh.",
  },
  {
    name: "objective",
    type: "string",
    default: "throughput",
    group: "Sweeps (--profile-models)",
    valueName: "METRIC",
    commands: ["profile", "report"],
    help:
      "What the best point of each model optimizes: throughput (highest), or avg-latency or pN-latency such as p99-latency (lowest).",
  },
  {
    name: "constraints",
    type: "dict",
    group: "Sweeps (--profile-models)",
    valueName: "BOUND=N,...",
    commands: ["profile", "report"],
    help:
      "Bounds the best point must meet: min-throughput (infer/sec), max-avg-latency, max-pN-latency (msec), e.g. max-p99-latency=20.",
  },
];
