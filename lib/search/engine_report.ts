/**
 * What an engine search reports: results/metrics-llm-inference.csv (one row
 * per point, best first: the variant's parameters, the load, every LLM
 * figure, the server's own counts and memory, whether it meets the
 * constraints) and the closing summary (the top variants, why the best
 * won, its command line ready to copy).
 */
import { csvText } from "../report/csv.ts";
import { formatGeneral } from "../report/format.ts";
import { describeLoad, type PointRecord, type SweepPoint } from "../sweep/mod.ts";
import type { Distribution, LevelResult } from "../types/results.ts";
import type { EngineVariant } from "./engine_variants.ts";
import { formatRankedSummary, type RankedPoint, rankModel } from "./report.ts";
import type { SearchOutcome } from "./run.ts";

export type EngineOutcome = SearchOutcome<EngineVariant>;
type Ranked = RankedPoint<EngineVariant>;

const ms = (d: Distribution | undefined, p?: number) => {
  const us = d === undefined ? undefined : p === undefined ? d.avg : d.percentiles.get(p);
  return us === undefined ? "" : (us / 1000).toFixed(3);
};
const fixed = (n: number | undefined, digits = 2) => n === undefined ? "" : n.toFixed(digits);

/**
 * Tokens/s per user as the reports show it: the median of the requests'
 * 1 / ITL, which one answer whose tokens arrived in a burst can not move
 * (the average, AIPerf's and the objective's, it can).
 */
export const perUserP50 = (r: LevelResult) =>
  r.llm?.outputTokenThroughputPerUser?.percentiles.get(50);

/** The CSV's figures after the parameters and the load: header and value. */
const FIGURES: ReadonlyArray<[string, (r: LevelResult) => string]> = [
  ["Output Token Throughput (tokens/sec)", (r) => fixed(r.llm?.outputTokenThroughput)],
  [
    "Output Token Throughput Per User avg (tokens/sec/user)",
    (r) => fixed(r.llm?.outputTokenThroughputPerUser?.avg),
  ],
  [
    "Output Token Throughput Per User p50 (tokens/sec/user)",
    (r) => fixed(perUserP50(r)),
  ],
  ["Request Throughput (req/sec)", (r) => fixed(r.llm?.requestThroughput, 3)],
  ["Request Goodput (req/sec)", (r) => fixed(r.llm?.goodput?.requestGoodput, 3)],
  ...[undefined, 50, 90, 99].flatMap((p): Array<[string, (r: LevelResult) => string]> => {
    const stat = p === undefined ? "avg" : `p${p}`;
    return [
      [`Time To First Token ${stat} (ms)`, (r) => ms(r.llm?.timeToFirstTokenUs, p)],
      [`Inter Token Latency ${stat} (ms)`, (r) => ms(r.llm?.interTokenLatencyUs, p)],
      [`Request Latency ${stat} (ms)`, (r) => ms(r.llm?.requestLatencyUs, p)],
    ];
  }),
  ["Output Sequence Length avg", (r) => fixed(r.llm?.outputSequenceLength.avg, 1)],
  ["Input Sequence Length avg", (r) => fixed(r.llm?.inputSequenceLength?.avg, 1)],
  ["Requests", (r) => String(r.client.requestCount)],
  ["Failed Requests", (r) => String(r.client.errorCount)],
  ["Stable", (r) => r.stable ? "Yes" : "No"],
  ["Client Output Tokens", (r) => String(r.llm?.totalOutputTokens ?? "")],
  ["Server Generated Tokens", (r) => String(r.llmServer?.generatedTokens ?? "")],
  ["Server Prompt Tokens", (r) => String(r.llmServer?.promptTokens ?? "")],
  ["Server Running avg", (r) => fixed(r.llmServer?.running?.avg)],
  ["Server Waiting avg", (r) => fixed(r.llmServer?.waiting?.avg)],
  ["Server KV Cache Usage max", (r) => fixed(r.llmServer?.kvCacheUsage?.max, 3)],
  ["Server RAM (MB)", (r) => fixed(r.serverRamMb, 1)],
];

/** The parameters of a search's variants, in their first variant's order. */
function parameterNames(outcome: EngineOutcome): string[] {
  const names = new Set<string>();
  for (const m of outcome.models) {
    for (const v of m.variants) Object.keys(v.variant.parameters).forEach((k) => names.add(k));
  }
  return [...names];
}

/** A point's load: a capacity search's (load 0) is the answer it measured, the result's. */
export function loadOf(record: PointRecord): SweepPoint {
  return record.point.value === 0 ? { ...record.point, value: record.result.value } : record.point;
}

/** results/metrics-llm-inference.csv */
export function formatEngineCsv(outcome: EngineOutcome): string {
  const parameters = parameterNames(outcome);
  const rows = [[
    "Variant",
    ...parameters,
    "Load",
    "Value",
    "Satisfies Constraints",
    "Reasons",
    ...FIGURES.map(([h]) => h),
  ]];
  for (const { model, variants } of outcome.models) {
    for (const p of rankModel(model, variants)) {
      const r = p.record.result;
      rows.push([
        p.variant.variant.name,
        ...parameters.map((k) => String(p.variant.variant.parameters[k] ?? "")),
        p.record.point.mode === "concurrency" ? "concurrency" : "request_rate",
        String(loadOf(p.record).value),
        p.reasons.length === 0 ? "Yes" : "No",
        p.reasons.join("; "),
        ...FIGURES.map(([, value]) => value(r)),
      ]);
    }
  }
  return csvText(rows);
}

/** `concurrency 4: 512 tokens/s, 128 tokens/s per user, TTFT p90 45.1 ms, ITL avg 7.8 ms` */
export function describeEnginePoint(p: Pick<Ranked, "record">): string {
  const r = p.record.result;
  const l = r.llm;
  const ram = r.serverRamMb === undefined ? "" : `, server RAM ${Math.round(r.serverRamMb)} MB`;
  const one = (n: number | undefined) =>
    n === undefined ? "-" : formatGeneral(Number(n.toFixed(1)));
  const capacity = p.record.point.value === 0 ? "capacity " : "";
  return `${capacity}${describeLoad(loadOf(p.record))}: ${
    one(l?.outputTokenThroughput)
  } tokens/s, ${one(perUserP50(r))} tokens/s per user (p50), TTFT p90 ${
    ms(l?.timeToFirstTokenUs, 90) || "-"
  } ms, ITL avg ${ms(l?.interTokenLatencyUs) || "-"} ms${ram}${r.stable ? "" : " (unstable)"}${
    r.client.errorCount > 0 ? `, ${r.client.errorCount} failed requests` : ""
  }`;
}

/** The closing summary: the top variants, why the best won, its command line. */
export function formatEngineSummary(
  outcome: EngineOutcome,
  options: { numConfigs: number; commands: ReadonlyMap<string, string> },
): string {
  return formatRankedSummary(outcome, {
    numConfigs: options.numConfigs,
    heading: (model, variants) => `Engine search of ${model.name}: ${variants} variants`,
    describeConfig: (p) => p.variant.variant.name,
    describePoint: describeEnginePoint,
    extra: (best) => {
      const command = options.commands.get(best.variant.variant.name);
      return command ? [`  Best command line: ${command}`] : [];
    },
  });
}
