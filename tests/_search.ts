/**
 * The model configuration search's end-to-end helpers: a model repository
 * with the identity model sleeping DELAY_MS per execution, the options of a
 * local search on the real Triton server, and its CSV's best row.
 */
import assert from "node:assert/strict";
import { defaultInferenceFields } from "../lib/search/fields.ts";
import { parseCsv } from "./_helpers.ts";
import { TRITON_DIR } from "./_triton.ts";

export const PERMISSIONS = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
  "--allow-run",
];
/**
 * 20 ms rather than 10: the formula's best (2 instances x max batch 4) then needs 400 requests/s,
 * which a 2-core machine shared with other test suites still serves within 10 % (at 10 ms, 800/s
 * came out at 87 % under a load average of 10; BENCHMARKS.md has those runs).
 */
export const DELAY_MS = 20;
export const MODEL = `backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
parameters [ { key: "execute_delay_ms", value: { string_value: "${DELAY_MS}" } } ]
`;

/** A model repository with `delay` (and `models`' other entries) in a new temporary directory. */
export function repository(models: Record<string, string> = {}): string {
  const root = Deno.makeTempDirSync({ prefix: "inferperf_search_" });
  for (const [name, config] of Object.entries({ delay: MODEL, ...models })) {
    Deno.mkdirSync(`${root}/models/${name}/1`, { recursive: true });
    Deno.writeTextFileSync(`${root}/models/${name}/config.pbtxt`, config);
  }
  return root;
}

/** Short windows with a loose stability bound: the machine is shared; the formula's answer is far apart. */
export const MEASURE = ["-p", "500", "-s", "50"];

/** A local search writing its repository, reports and checkpoints under `root`, suffixed `tag`. */
export function local(root: string, tag = ""): string[] {
  return [
    "profile",
    "--model-repository",
    `${root}/models`,
    "--triton-server-path",
    `${TRITON_DIR}/bin/tritonserver`,
    "--triton-server-flags",
    `backend-directory=${TRITON_DIR}/backends`,
    "--output-model-repository-path",
    `${root}/output${tag}`,
    "--export-path",
    `${root}/export${tag}`,
    "--checkpoint-directory",
    `${root}/checkpoints${tag}`,
    ...MEASURE,
  ];
}

export const INFERENCE_HEADER =
  "Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)";

/**
 * Model Analyzer's default inference columns and the server's compute time after them (column
 * 9), by which a search's best is judged against the capacity a busy host really leaves.
 */
export function withCompute(requestRate: boolean): string[] {
  return [
    "--inference-output-fields",
    [...defaultInferenceFields(requestRate), "perf_server_compute_infer"].join(","),
  ];
}

/** The best row of a search's metrics-model-inference.csv and the number of points. */
export function bestOf(
  root: string,
  tag: string,
  header: RegExp | string = INFERENCE_HEADER,
): { best: string[]; points: number; csv: string } {
  const csv = Deno.readTextFileSync(`${root}/export${tag}/results/metrics-model-inference.csv`);
  if (typeof header === "string") assert.equal(csv.split("\n")[0], header);
  else assert.match(csv.split("\n")[0]!, header);
  const rows = parseCsv(csv).slice(1);
  return { best: rows[0]!, points: rows.length, csv };
}
