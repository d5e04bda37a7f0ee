/** --profile-export-jsonl: one JSON line per request (AIPerf's profile_export.jsonl records). */
import { loadTokenizer } from "../../input/tokenizer.ts";
import type { SinkDef } from "./sink.ts";

export const requestRecordsSink: SinkDef = {
  wanted: (plan) => Boolean(plan.profileExportJsonl),
  output: (plan) =>
    plan.profileExportJsonl === undefined
      ? undefined
      : { path: plan.profileExportJsonl, flag: "--profile-export-jsonl" },
  histograms: false,
  async open(plan) {
    const { RequestRecordsWriter } = await import("../../report/request_records.ts");
    // Output texts the server gave no usage for are counted as the console counts them.
    const tokenizer = plan.serviceKind === "openai"
      ? await loadTokenizer(plan.tokenizer)
      : undefined;
    const writer = new RequestRecordsWriter(
      plan.profileExportJsonl!,
      tokenizer ? { tokenizer } : {},
    );
    return {
      levelStart: (value) => writer.levelStart(value),
      records: writer,
      finish: () => writer.finish(),
    };
  },
};
