/** The Output section of --help: Console verbosity and the files a run writes. */
import type { OptionDef } from "../option_types.ts";

export const OUTPUT: readonly OptionDef[] = [
  {
    name: "latency-report-file",
    short: "f",
    type: "string",
    group: "Output",
    valueName: "FILE.csv",
    commands: ["profile", "demo", "report"],
    help: "Write the results as CSV (perf_analyzer's columns, for every service kind).",
  },
  {
    name: "llm-csv",
    type: "string",
    group: "Output",
    valueName: "FILE.csv",
    commands: ["profile", "demo"],
    help:
      "Write the LLM metrics of token-streaming runs (--service-kind openai, Triton's generate) as genai-perf's CSV.",
  },
  {
    name: "verbose-csv",
    perfAnalyzer: true,
    type: "boolean",
    group: "Output",
    help: "Add average latency, request/response and response wait columns to the CSV.",
  },
  {
    name: "profile-export-file",
    perfAnalyzer: true,
    type: "string",
    group: "Output",
    valueName: "FILE.json",
    help:
      "Export every request (send and response timestamps, inputs, outputs) and the window boundaries of every level as JSON, in perf_analyzer's format. The file must not exist unless --overwrite is given.",
  },
  {
    name: "profile-export-jsonl",
    type: "string",
    group: "Output",
    valueName: "FILE.jsonl",
    help:
      "One JSON line per request, valid or failed, with every figure of it (TTFT, TTST, inter-chunk gaps and their summary, ITL, ISL/OSL as client and server count them, latency, error cause, session and turn), in AIPerf's profile_export.jsonl record layout (docs/request_records.schema.json).",
  },
  {
    name: "overwrite",
    type: "boolean",
    group: "Output",
    help: "Let --profile-export-file replace an existing file.",
  },
  {
    name: "collect-metrics",
    perfAnalyzer: true,
    type: "boolean",
    group: "Output",
    help:
      "Scrape the server's Prometheus GPU metrics during the measurement and report them per level (console, and the CSV with --verbose-csv). An endpoint that cannot be read is one warning: the run measures on and each level says it has no metrics.",
  },
  {
    name: "require-metrics",
    type: "boolean",
    group: "Output",
    help:
      "With --collect-metrics: stop before the load (exit 99) when the metrics endpoint cannot be read, instead of measuring without metrics.",
  },
  {
    name: "metrics-url",
    perfAnalyzer: true,
    type: "string",
    group: "Output",
    valueName: "URL",
    help: "Prometheus endpoint for --collect-metrics. Default: host of -u, port 8002, /metrics.",
  },
  {
    name: "metrics-interval",
    perfAnalyzer: true,
    type: "int",
    default: 1000,
    group: "Output",
    valueName: "MS",
    help: "Milliseconds between metric scrapes.",
  },
  {
    name: "report-html",
    type: "string",
    group: "Output",
    valueName: "FILE.html",
    commands: ["profile", "demo", "report"],
    help:
      "Write a self-contained HTML report: throughput vs latency, latency components, percentiles and per-window charts. Sweeps and inferperf report write one by default (report.html in the checkpoint directory) with the best points, a curve per series and every point.",
  },
  {
    name: "summary-json",
    type: "string",
    group: "Output",
    valueName: "FILE.json",
    help: "Write every reported figure per level as JSON (schema: docs/summary.schema.json).",
  },
  {
    name: "html",
    type: "string",
    group: "Output",
    valueName: "FILE.html",
    commands: ["compare"],
    help:
      "For inferperf compare: write a page with the two runs' curves overlaid and every figure.",
  },
  {
    name: "fail-on-regression",
    type: "float",
    group: "Output",
    valueName: "PCT",
    commands: ["compare"],
    help:
      "For inferperf compare: exit 5 when a figure is significantly worse than the baseline by more than PCT percent.",
  },
  {
    name: "output",
    short: "o",
    type: "string",
    group: "Output",
    valueName: "OUT.json",
    commands: ["merge", "input-template"],
    help:
      "The file inferperf merge writes (a summary JSON or a profile export, as the merged runs are), or inferperf input-template's input data (default: stdout).",
  },
];
