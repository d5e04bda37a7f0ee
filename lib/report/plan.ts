/** The report part of a run's plan: output files and how much the console says. */

export interface ReportPlan {
  profileExportFile?: string;
  /** --profile-export-jsonl: one JSON line per request (AIPerf's profile_export.jsonl records). */
  profileExportJsonl?: string;
  /** --overwrite: --profile-export-file may replace an existing file. */
  overwrite: boolean;
  /**
   * --endpoint as given, "" without it: the export's `endpoint`, which
   * perf_analyzer writes verbatim for every service kind.
   */
  exportEndpoint: string;
  reportHtml?: string;
  summaryJson?: string;
  /** -f: the CSV file. */
  latencyReportFile?: string;
  /** --llm-csv: genai-perf's CSV of the LLM metrics. */
  llmCsv?: string;
  verboseCsv: boolean;
  verbose: number;
  /** Where the run is, on stderr (a live line on a terminal); false with --no-progress. */
  progress: boolean;
}
