/**
 * The C API benchmark: inferperf's --service-kind triton_c_api at
 * concurrency 1 and 8 against a minimal C client (c_client.c, compiled here
 * with gcc against the library's header) on the same library, identity
 * model and machine, in the same run.
 *
 * deno run -A bench/triton_c_api/run.ts [TRITON_DIR]   (default ../shared/tritonserver)
 * Prints a Markdown table for BENCHMARKS.md.
 */
import { TRITON_DIR as DEFAULT_TRITON_DIR } from "../../tests/_triton.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const TRITON_DIR = Deno.args[0] ?? DEFAULT_TRITON_DIR;
const MODELS = `${ROOT}fixtures/triton_c_api/models`;
const MODEL = "identity_fp32";
const SECONDS = 5;

async function run(command: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(command, { args, stderr: "inherit" }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`${command} ${args.join(" ")} failed:\n${stdout}`);
  return stdout;
}

async function cClient(dir: string): Promise<number> {
  const binary = `${dir}/c_client`;
  await run("gcc", [
    "-O2",
    "-o",
    binary,
    `${ROOT}bench/triton_c_api/c_client.c`,
    `-I${TRITON_DIR}/include`,
    `-L${TRITON_DIR}/lib`,
    "-ltritonserver",
    `-Wl,-rpath,${TRITON_DIR}/lib`,
    "-lpthread",
  ]);
  const result = JSON.parse(await run(binary, [TRITON_DIR, MODELS, MODEL, String(SECONDS)]));
  return result.inferPerSec;
}

/** inferperf's throughput and average latency at `concurrency`, from its CSV. */
async function inferperf(dir: string, concurrency: number): Promise<[number, number]> {
  const csv = `${dir}/c${concurrency}.csv`;
  await run(Deno.execPath(), [
    "run",
    "--v8-flags=--max-semi-space-size=4",
    "-A",
    `${ROOT}main.ts`,
    "--service-kind",
    "triton_c_api",
    "--triton-server-directory",
    TRITON_DIR,
    "--model-repository",
    MODELS,
    "-m",
    MODEL,
    "--concurrency-range",
    String(concurrency),
    "-p",
    String(SECONDS * 1000 / 2),
    "-s",
    "20",
    "-f",
    csv,
    "--verbose-csv",
  ]);
  const [header, row] = (await Deno.readTextFile(csv)).trim().split("\n").map((l) => l.split(","));
  return [
    Number(row[header.indexOf("Inferences/Second")]),
    Number(row[header.indexOf("Avg latency")]),
  ];
}

const dir = await Deno.makeTempDir();
try {
  const c = await cClient(dir);
  const [one, oneLatency] = await inferperf(dir, 1);
  const [eight, eightLatency] = await inferperf(dir, 8);
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log("| client | concurrency | infer/s | avg latency | ratio |");
  console.log("| --- | --- | --- | --- | --- |");
  console.log(`| C client (c_client.c) | 1 | ${f(c)} | ${(1e6 / c).toFixed(1)} us | 1 |`);
  console.log(`| inferperf | 1 | ${f(one)} | ${oneLatency} us | ${(one / c).toFixed(2)} x C |`);
  console.log(
    `| inferperf | 8 | ${f(eight)} | ${eightLatency} us | ${
      (eight / one).toFixed(2)
    } x concurrency 1 |`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
