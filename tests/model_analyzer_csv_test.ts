/**
 * The -f CSV read as Triton Model Analyzer reads perf_analyzer's
 * (model_analyzer/perf_analyzer/perf_analyzer.py, _parse_generic_outputs):
 * csv.DictReader over the file, each row a dict by header name; a metric is
 * read when its column is in the row, as float(cell) / its reduction factor;
 * a GPU metric cell is `UUID:value;UUID:value;`, each value divided by its
 * factor. The facts below are its tables; each value read must equal the
 * run's own figures (--summary-json).
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";

/** Model Analyzer's perf_metric_table: [record, CSV column, reduction factor]. */
const PERF_METRICS: ReadonlyArray<[string, string, number]> = [
  ["perf_latency_avg", "Avg latency", 1000],
  ["perf_latency_p90", "p90 latency", 1000],
  ["perf_latency_p95", "p95 latency", 1000],
  ["perf_latency_p99", "p99 latency", 1000],
  ["perf_throughput", "Inferences/Second", 1],
  ["perf_client_send_recv", "request/response", 1000],
  ["perf_client_send_recv", "send/recv", 1000],
  ["perf_client_response_wait", "response wait", 1000],
  ["perf_server_queue", "Server Queue", 1000],
  ["perf_server_compute_infer", "Server Compute Infer", 1000],
  ["perf_server_compute_input", "Server Compute Input", 1000],
  ["perf_server_compute_output", "Server Compute Output", 1000],
];

/** Model Analyzer's gpu_metric_table: [record, CSV column, reduction factor]. */
const GPU_METRICS: ReadonlyArray<[string, string, number]> = [
  ["gpu_utilization", "Avg GPU Utilization", 0.01],
  ["gpu_power_usage", "Avg GPU Power Usage", 1],
  ["gpu_used_memory", "Max GPU Memory Usage", 1_000_000],
  ["gpu_free_memory", "Total GPU Memory", 1_000_000],
];

/** csv.DictReader: the first line names the columns of every later line. */
function dictReader(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split("\n").map((line) => line.split(","));
  return lines.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]])));
}

/** _extract_perf_records_from_row: the metrics whose column the row has. */
function perfRecords(row: Record<string, string>): Map<string, number> {
  const records = new Map<string, number>();
  for (const [tag, column, factor] of PERF_METRICS) {
    if (column in row) records.set(tag, Number.parseFloat(row[column]) / factor);
  }
  return records;
}

/** _extract_gpu_records_from_row: per metric, per GPU UUID. */
function gpuRecords(row: Record<string, string>): Map<string, Map<string, number>> {
  const records = new Map<string, Map<string, number>>();
  for (const [tag, column, factor] of GPU_METRICS) {
    let cell = row[column];
    if (!cell) continue;
    if (cell.endsWith(";")) cell = cell.slice(0, -1);
    const perGpu = new Map<string, number>();
    for (const pair of cell.split(";")) {
      const [uuid, value] = pair.split(":");
      perGpu.set(uuid, Number.parseFloat(value) / factor);
    }
    records.set(tag, perGpu);
  }
  return records;
}

interface SummaryLevel {
  value: number;
  client: {
    throughput: number;
    avg_latency_us: number;
    percentiles_us: Record<string, number>;
    avg_send_us: number;
    avg_recv_us: number;
    avg_wait_us: number;
  };
  server: {
    queue_us: number;
    compute_input_us: number;
    compute_infer_us: number;
    compute_output_us: number;
  }[];
  gpu_metrics?: Record<
    string,
    {
      utilization: number;
      power_watts: number;
      memory_used_bytes: number;
      memory_total_bytes: number;
    }
  >;
}

/** The CSV's whole microseconds, in Model Analyzer's milliseconds. */
const ms = (us: number) => Math.trunc(us) / 1000;

async function profile(
  server: { addr: string; metricsPort: number },
  extra: string[],
): Promise<{ rows: Record<string, string>[]; levels: SummaryLevel[] }> {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCli([
      ...["-m", "simple", "-u", server.addr, "--concurrency-range", "1:2", "-p", "300"],
      // Wide: the point is the columns, not stability on a busy 2-core machine.
      ...["-s", "90", "-f", `${dir}/perf.csv`, "--summary-json", `${dir}/summary.json`],
      ...extra,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const rows = dictReader(await Deno.readTextFile(`${dir}/perf.csv`));
    const { levels } = JSON.parse(await Deno.readTextFile(`${dir}/summary.json`));
    return { rows, levels };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function checkPerf(row: Record<string, string>, level: SummaryLevel, verbose: boolean): void {
  const records = perfRecords(row);
  const c = level.client;
  const s = level.server[0];
  const expected: Record<string, number> = {
    perf_latency_p90: ms(c.percentiles_us["90"]),
    perf_latency_p95: ms(c.percentiles_us["95"]),
    perf_latency_p99: ms(c.percentiles_us["99"]),
    perf_server_queue: ms(s.queue_us),
    perf_server_compute_input: ms(s.compute_input_us),
    perf_server_compute_infer: ms(s.compute_infer_us),
    perf_server_compute_output: ms(s.compute_output_us),
  };
  if (verbose) {
    const send = Math.trunc(c.avg_send_us);
    const recv = Math.trunc(c.avg_recv_us);
    expected.perf_latency_avg = ms(c.avg_latency_us);
    expected.perf_client_send_recv = (send + recv) / 1000;
    expected.perf_client_response_wait =
      (Math.trunc(c.avg_send_us + c.avg_wait_us + c.avg_recv_us) - send - recv) / 1000;
  }
  assert.deepEqual(
    [...records.keys()].filter((k) => k !== "perf_throughput").sort(),
    Object.keys(expected).sort(),
    "the columns Model Analyzer finds",
  );
  for (const [tag, value] of Object.entries(expected)) {
    assert.equal(records.get(tag), value, tag);
  }
  // Six significant digits, as perf_analyzer's stream writes a double.
  const throughput = records.get("perf_throughput")!;
  assert.ok(Math.abs(throughput - c.throughput) <= c.throughput * 5e-6, `${throughput}`);
}

Deno.test("Model Analyzer reads the CSV's columns as the run's figures", async () => {
  await withServer(async (server) => {
    const metrics = [
      "--collect-metrics",
      "--metrics-url",
      `127.0.0.1:${server.metricsPort}/metrics`,
    ];
    const verbose = await profile(server, [
      ...metrics,
      "--metrics-interval",
      "50",
      "--verbose-csv",
    ]);
    assert.equal(verbose.rows.length, 2);
    for (const row of verbose.rows) {
      const level = verbose.levels.find((l) => String(l.value) === row["Concurrency"])!;
      checkPerf(row, level, true);
      const gpus = gpuRecords(row);
      assert.deepEqual([...gpus.keys()], GPU_METRICS.map(([tag]) => tag));
      const want = level.gpu_metrics!;
      for (const [uuid, m] of Object.entries(want)) {
        // Utilization and power: six significant digits; memory: whole bytes.
        const near = (a: number, b: number) => Math.abs(a - b) <= Math.abs(b) * 5e-6;
        assert.ok(near(gpus.get("gpu_utilization")!.get(uuid)!, m.utilization * 100), uuid);
        assert.ok(near(gpus.get("gpu_power_usage")!.get(uuid)!, m.power_watts), uuid);
        assert.equal(gpus.get("gpu_used_memory")!.get(uuid), Math.trunc(m.memory_used_bytes) / 1e6);
        assert.equal(
          gpus.get("gpu_free_memory")!.get(uuid),
          Math.trunc(m.memory_total_bytes) / 1e6,
        );
      }
    }

    // Without --verbose-csv perf_analyzer writes neither the average, the split of the wait nor
    // the GPU metrics, even with --collect-metrics.
    const plain = await profile(server, metrics);
    for (const row of plain.rows) {
      const level = plain.levels.find((l) => String(l.value) === row["Concurrency"])!;
      checkPerf(row, level, false);
      assert.equal(gpuRecords(row).size, 0);
    }
  });
});
