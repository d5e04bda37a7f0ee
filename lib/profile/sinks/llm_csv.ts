/** --llm-csv: genai-perf's CSV of the LLM metrics, beside -f's perf_analyzer CSV. */
import { writeFileAtomic } from "../../report/output_file.ts";
import { formatLlmCsv } from "../../report/csv.ts";
import type { SinkDef } from "./sink.ts";

export const llmCsvSink: SinkDef = {
  wanted: (plan) => Boolean(plan.llmCsv),
  output: (plan) =>
    plan.llmCsv === undefined ? undefined : { path: plan.llmCsv, flag: "--llm-csv" },
  histograms: false,
  open: (plan, { mode }) =>
    Promise.resolve({
      finish: ({ results }) => {
        const llm = results.filter((r) => r.llm !== undefined);
        if (llm.length > 0) writeFileAtomic(plan.llmCsv!, formatLlmCsv(llm, mode));
      },
    }),
};
