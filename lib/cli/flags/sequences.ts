/** The Sequences section of --help: How requests of sequence models are grouped. */
import type { OptionDef } from "../option_types.ts";

export const SEQUENCES: readonly OptionDef[] = [
  {
    name: "num-of-sequences",
    perfAnalyzer: true,
    type: "int",
    default: 4,
    group: "Sequences",
    help: "Concurrent sequences in request-rate mode.",
  },
  {
    name: "sequence-length",
    perfAnalyzer: true,
    type: "int",
    default: 20,
    group: "Sequences",
    help: "Base length of a sequence.",
  },
  {
    name: "sequence-length-variation",
    perfAnalyzer: true,
    type: "float",
    default: 20,
    group: "Sequences",
    help: "Variation of sequence length in percent.",
  },
  {
    name: "sequence-id-range",
    perfAnalyzer: true,
    type: "string",
    group: "Sequences",
    valueName: "START[:END]",
    help: "Range of sequence ids. Default 1:4294967295.",
  },
  {
    name: "serial-sequences",
    perfAnalyzer: true,
    type: "boolean",
    group: "Sequences",
    help: "Send one request of a sequence at a time.",
  },
];
