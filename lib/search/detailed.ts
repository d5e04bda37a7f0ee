/**
 * A configuration's detailed report (`inferperf report --report-model-configs
 * NAME,...`), as Model Analyzer's: one self-contained page per configuration
 * with throughput and latency against the load, the latency breakdown of
 * every point (server queue, compute input, infer, output, client
 * send/recv), the server's memory, the configuration and a table of every
 * point; and the same page as PDF where headless Chromium runs.
 */
import { escapeHtml, htmlPage } from "../report/html_template.ts";
import { chartSection } from "../report/html_template.ts";
import { formatGeneral } from "../report/format.ts";
import { formatModelConfig } from "../protocol/model_config.ts";
import { constraintText, describeLoad } from "../sweep/mod.ts";
import type { LevelResult } from "../types/results.ts";
import { UsageError } from "../types/errors.ts";
import type { SearchModel } from "./config.ts";
import { DETAILED_SCRIPT } from "./_detailed_script.ts";
import { instanceGroupText } from "./fields.ts";
import { describeObjectives, rankPoints } from "./objectives.ts";
import type { SearchOutcome } from "./run.ts";
import type { VariantOutcome } from "./walks.ts";

/** The breakdown's segments, bottom first, as Model Analyzer's latency breakdown plot. */
export const BREAKDOWN_NAMES = [
  "Server queue",
  "Server compute input",
  "Server compute infer",
  "Server compute output",
  "Client send/recv",
  "Not split (no server statistics)",
] as const;

const ms = (us: number | undefined) => us === undefined ? null : us / 1000;

/** A point's average latency split as Model Analyzer plots it; one unsplit bar without server statistics. */
export function breakdown(r: LevelResult): Array<{ name: string; ms: number }> {
  const server = r.server?.[0];
  const c = r.client;
  if (!server) return [{ name: BREAKDOWN_NAMES[5], ms: c.avgLatencyUs / 1000 }];
  return [
    [BREAKDOWN_NAMES[0], server.queueUs],
    [BREAKDOWN_NAMES[1], server.computeInputUs],
    [BREAKDOWN_NAMES[2], server.computeInferUs],
    [BREAKDOWN_NAMES[3], server.computeOutputUs],
    [BREAKDOWN_NAMES[4], c.avgSendUs + c.avgRecvUs],
  ].map(([name, us]) => ({ name: name as string, ms: (us as number) / 1000 }));
}

/** The configurations `names` asks for, each with its model; unknown names are a UsageError. */
export function findConfigs(
  outcome: SearchOutcome,
  names: readonly string[],
): Array<{ model: SearchModel; variant: VariantOutcome }> {
  const all = outcome.models.flatMap((m) =>
    m.variants.map((variant) => ({ model: m.model, variant }))
  );
  const unknown = names.filter((n) => !all.some((c) => c.variant.variant.name === n));
  if (unknown.length > 0) {
    throw new UsageError([
      `Unknown configuration${unknown.length > 1 ? "s" : ""} ${
        unknown.join(", ")
      } for --report-model-configs: the checkpoint has ${
        all.map((c) => c.variant.variant.name).join(", ") || "none"
      }`,
    ]);
  }
  return names.map((n) => all.find((c) => c.variant.variant.name === n)!);
}

const num = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined ? "–" : formatGeneral(Number(n.toFixed(digits)));

/** The detailed report page of one configuration. */
export function renderDetailedHtml(
  config: { model: SearchModel; variant: VariantOutcome },
  context: { version: string },
): string {
  const { model, variant } = config;
  const records = [...variant.records].sort((a, b) =>
    a.point.batchSize - b.point.batchSize || a.point.value - b.point.value
  );
  const verdicts = new Map(
    rankPoints(records, { ...model, result: (r) => r.result }).map((r) => [r.item, r.reasons]),
  );
  const mode = records[0]?.point.mode ?? "concurrency";
  const batches = new Set(records.map((r) => r.point.batchSize)).size > 1;
  const points = records.map((record) => {
    const r = record.result;
    const reasons = verdicts.get(record) ?? [];
    const segments = breakdown(r);
    return {
      value: record.point.value,
      label: `${formatGeneral(record.point.value)}${
        batches ? ` (b${record.point.batchSize})` : ""
      }`,
      throughput: r.client.throughput,
      p99Ms: ms(r.client.percentilesUs.get(99)),
      p95Ms: ms(r.client.percentilesUs.get(95)),
      avgMs: r.client.avgLatencyUs / 1000,
      ramMb: r.serverRamMb ?? null,
      candidate: reasons.length === 0,
      status: reasons.length === 0 ? "within the constraints" : reasons.join("; "),
      segments,
    };
  });
  const shown = new Set(points.flatMap((p) => p.segments.map((s) => s.name)));
  const c = variant.variant.config;
  const batching = c.dynamic_batching === undefined ? "off" : "on";
  const meta = `inferperf ${context.version} · model ${model.name} · ${
    instanceGroupText(c)
  } instance(s), max batch size ${
    c.max_batch_size ?? 0
  }, dynamic batching ${batching} · ${records.length} points · objectives: ${
    describeObjectives(model.objectives)
  } · ${
    model.goals.constraints.length === 0
      ? "no constraints"
      : `constraints: ${model.goals.constraints.map(constraintText).join(", ")}`
  }`;
  const loadLabel = mode === "concurrency" ? "Concurrency" : "Request rate";
  const rows = records.map((record, i) => {
    const p = points[i]!;
    const r = record.result;
    const s = r.server?.[0];
    const cells = [
      `<td class="text">${escapeHtml(describeLoad(record.point))}</td>`,
      `<td>${record.point.batchSize}</td>`,
      `<td>${num(p.throughput)}</td>`,
      `<td>${num(p.avgMs)}</td>`,
      `<td>${num(ms(r.client.percentilesUs.get(90)))}</td>`,
      `<td>${num(p.p95Ms)}</td>`,
      `<td>${num(p.p99Ms)}</td>`,
      ...[s?.queueUs, s?.computeInputUs, s?.computeInferUs, s?.computeOutputUs].map((us) =>
        `<td>${num(ms(us), 2)}</td>`
      ),
      `<td>${num(ms(r.client.avgSendUs + r.client.avgRecvUs), 2)}</td>`,
      `<td>${num(p.ramMb)}</td>`,
      `<td class="text">${r.stable ? "yes" : "no"}</td>`,
      `<td class="text">${escapeHtml(p.candidate ? "Yes" : `No: ${p.status}`)}</td>`,
    ];
    return `<tr data-point-row="${record.point.value}">${cells.join("")}</tr>`;
  });
  const head = [
    '<th class="text">Load</th>',
    "<th>Batch</th>",
    "<th>Throughput (infer/sec)</th>",
    "<th>Avg latency (ms)</th>",
    "<th>p90 (ms)</th>",
    "<th>p95 (ms)</th>",
    "<th>p99 (ms)</th>",
    "<th>Server queue (ms)</th>",
    "<th>Compute input (ms)</th>",
    "<th>Compute infer (ms)</th>",
    "<th>Compute output (ms)</th>",
    "<th>Client send/recv (ms)</th>",
    "<th>Server RAM (MB)</th>",
    '<th class="text">Stable</th>',
    '<th class="text">Satisfies constraints</th>',
  ];
  const memory = points.some((p) => p.ramMb !== null)
    ? chartSection(
      "memory",
      "Server memory",
      "The server process's resident memory after each point (local mode; this CPU server has " +
        "no GPU metrics).",
    )
    : '<p class="note">No server memory was measured (remote and c_api modes do not read it).</p>\n';
  const body = [
    `<div class="meta">${escapeHtml(meta)}</div>\n`,
    variant.failure ? `<p class="note">${escapeHtml(variant.failure)}</p>\n` : "",
    chartSection(
      "throughput",
      `Throughput vs ${loadLabel.toLowerCase()}`,
      "Filled: within the constraints; hollow: not (unstable, failed requests or beyond a bound).",
    ),
    chartSection("latency", `Latency vs ${loadLabel.toLowerCase()}`, "p99, p95 and average."),
    chartSection(
      "breakdown",
      "Latency breakdown",
      "Each point's average latency: the server's queue and compute times (its statistics " +
        "extension), then the client's send and receive; the rest of the latency (network, " +
        "server overhead) is not drawn.",
    ),
    memory,
    `<h2>Configuration</h2>\n<pre data-config>${escapeHtml(formatModelConfig(c))}</pre>\n`,
    `<h2>Every point</h2>\n<div class="scroll"><table><thead><tr>${head.join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table></div>\n`,
  ].join("");
  return htmlPage(`Detailed report: ${variant.variant.name}`, body, {
    data: {
      loadLabel,
      points,
      componentNames: BREAKDOWN_NAMES,
      componentsShown: BREAKDOWN_NAMES.filter((n) => shown.has(n)),
    },
    script: DETAILED_SCRIPT,
  });
}

/** Chromium's names on PATH, tried in order for the PDF. */
const CHROMIUM = ["chromium", "chromium-browser", "google-chrome"];

/**
 * Prints `htmlFile` to `pdfFile` with headless Chromium; returns why not
 * when none runs (not installed, or no permission to run it).
 */
export async function printPdf(htmlFile: string, pdfFile: string): Promise<string | undefined> {
  const profile = Deno.makeTempDirSync({ prefix: "inferperf_pdf_" });
  try {
    for (const command of CHROMIUM) {
      try {
        const { success } = await new Deno.Command(command, {
          args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            `--user-data-dir=${profile}`,
            "--no-pdf-header-footer",
            // The page's script draws the charts: let it run before printing.
            "--virtual-time-budget=5000",
            `--print-to-pdf=${pdfFile}`,
            `file://${Deno.realPathSync(htmlFile)}`,
          ],
          stdout: "null",
          stderr: "null",
          signal: AbortSignal.timeout(60_000),
        }).output();
        if (success) return undefined;
        return `${command} failed to print the page`;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        if (
          error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
        ) {
          return "no permission to run Chromium (--allow-run)";
        }
        throw error;
      }
    }
    return `no headless Chromium (${CHROMIUM.join(", ")}) on PATH`;
  } finally {
    Deno.removeSync(profile, { recursive: true });
  }
}
