/**
 * perf_analyzer's model-driven behaviour, against the real Triton server
 * (tests/_triton.ts) with models of fixtures/triton/models that stand in for
 * real scripts' models: output shared memory sized from the model (`image`,
 * 3x224x224 FP32 at -b 64), an ensemble over a sequence model
 * (`sequence_ensemble`) and a BLS model's composing models, optional inputs
 * (`optional`), and the shape and data checks whose key phrases scripts grep
 * for. Each run sends a few requests.
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "./_helpers.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";

const server = "reason" in triton ? undefined : await startTriton();
const http = ["-u", server?.http ?? ""];
const grpc = ["-i", "grpc", "-u", server?.grpc ?? ""];
const data = (name: string) => new URL(`../fixtures/triton/data/${name}`, import.meta.url).pathname;

/** Runs the CLI and requires exit 0 with every request successful. */
async function ok(
  args: string[],
  options: { permissions?: string[]; timeoutMs?: number } = {},
): Promise<CliResult> {
  const cli = await runCli(args, { timeoutMs: 30_000, ...options });
  assert.equal(cli.code, 0, `inferperf ${args.join(" ")}\n${cli.stderr}${cli.stdout}`);
  assert.doesNotMatch(cli.stdout, /Failed requests/);
  return cli;
}

/** Runs the CLI with a data file holding `json`; requires the one-line input error (exit 1). */
async function refused(args: string[], json: unknown): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_dropin_" });
  try {
    const file = `${dir}/data.json`;
    await Deno.writeTextFile(file, JSON.stringify(json));
    const cli = await runCli([...args, "--input-data", file, "--request-count", "3"]);
    assert.equal(cli.code, 1, cli.stderr + cli.stdout);
    assert.match(cli.stderr, /^error: [^\n]*\n$/, `one line:\n${cli.stderr}`);
    return cli.stderr.replaceAll(file, "FILE");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function leftovers(): Promise<string[]> {
  const out = await new Deno.Command("ls", { args: ["-1", "/dev/shm"] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((n) => n.startsWith("inferperf_"));
}

tritonTest(
  "system shared memory: a 38,535,168-byte output at -b 64 is sized from the model",
  async () => {
    const before = await leftovers();
    for (const target of [http, [...grpc, "--streaming"]]) {
      // No --output-shared-memory-size: its default (100 KB) is for outputs of variable size.
      const cli = await ok(
        ["-m", "image", ...target, "-b", "64", "--shared-memory", "system", "--request-count", "3"],
        { permissions: ["-A"] },
      );
      assert.match(cli.stdout, /Request count: 3\n/);
    }
    assert.deepEqual(await leftovers(), before, "every region removed");
  },
);

tritonTest(
  "an ensemble over a sequence model gets sequence ids and flags: every request succeeds",
  async () => {
    const sequences = data("sequence.json");
    // perf_analyzer's command line from a script: gRPC stream, request rates.
    const stream = await ok([
      "-m",
      "sequence_ensemble",
      ...grpc,
      "--request-rate-range",
      "100:200:50",
      "--streaming",
      "--input-data",
      sequences,
      "--request-count",
      "20",
      "--sequence-id-range",
      "1000:1999",
    ]);
    assert.equal(stream.stdout.match(/Request count: 20\n/g)?.length, 3, stream.stdout);
    // Plain HTTP at concurrency 2; the data's validation outputs are checked step by step.
    const plain = await ok([
      "-m",
      "sequence_ensemble",
      ...http,
      "--concurrency-range",
      "2",
      "--input-data",
      sequences,
      "--request-count",
      "20",
      "--sequence-id-range",
      "2000:2999",
    ]);
    assert.match(plain.stdout, /Request count: 20\n/);
  },
);

/** Triton's count of failed requests of `model` (its statistics: requests the client never reports too). */
async function failedOf(model: string): Promise<number> {
  const response = await fetch(`http://${server!.http}/v2/models/${model}/stats`);
  const { model_stats: [stats] } = await response.json();
  return stats.inference_stats.fail.count as number;
}

tritonTest(
  "perf_analyzer's QA case: 1500:2000:250 sequences over the stream, 512 data files, none fails",
  async () => {
    // The QA's own numbers and model configuration (qa_sequence: 8 slots, 5 s idle timeout), with
    // -p 1000 for the QA's -p 10000 (at least 3 windows a level either way): 11-30 s here. Triton's
    // statistics count the requests no window reports, the END each level sends its sequences
    // under way: when those waited for every lane's answer, 5,238 failed ("must specify the START
    // flag"), Triton having idled out the sequences meanwhile.
    const files = Array.from({ length: 512 }, () => ["--input-data", data("sequence.json")]);
    const before = await failedOf("qa_sequence_ensemble");
    const cli = await ok([
      ...[
        "-m",
        "qa_sequence_ensemble",
        ...grpc,
        "--streaming",
        "--concurrency-range",
        "1500:2000:250",
      ],
      ...["-p", "1000", "-s", "100", "--sequence-id-range", "4000:9999", ...files.flat()],
    ], { timeoutMs: 180_000 });
    assert.equal(
      cli.stdout.match(/^Request concurrency: (1500|1750|2000)$/gm)?.length,
      3,
      cli.stdout,
    );
    assert.equal(await failedOf("qa_sequence_ensemble"), before, "no request failed at the server");
  },
);

tritonTest(
  "--bls-composing-models naming a sequence model makes the model a sequence model",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "inferperf_dropin_" });
    try {
      const exported = `${dir}/profile.json`;
      // identity_fp32 stands in for a BLS model that calls `sequence` (the build has no Python).
      await ok([
        "-m",
        "identity_fp32",
        ...http,
        "--bls-composing-models",
        "sequence",
        "--request-count",
        "5",
        "--sequence-id-range",
        "3000:3999",
        "--profile-export-file",
        exported,
      ]);
      const profile = JSON.parse(await Deno.readTextFile(exported));
      const requests = profile.experiments.flatMap((e: { requests: unknown[] }) => e.requests);
      assert.ok(requests.length >= 5);
      for (const request of requests) {
        assert.ok(
          request.sequence_id >= 3000 && request.sequence_id <= 3999,
          JSON.stringify(request),
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

tritonTest(
  "an optional input a step leaves out is not sent; -b 2 over steps that differ is refused",
  async () => {
    const optional = data("optional.json");
    // Shared memory too, which perf_analyzer refuses with optional inputs (-A for /dev/shm).
    const paths = [http, grpc, [...grpc, "--streaming"], [...http, "--shared-memory", "system"]];
    for (const target of paths) {
      // Validation data: OUTPUT1 comes back only from the step that gives INPUT1.
      const cli = await ok([
        "-m",
        "optional",
        ...target,
        "--input-data",
        optional,
        "--request-count",
        "10",
      ], { permissions: ["-A"] });
      assert.match(cli.stdout, /Request count: 10\n/);
    }
    const twice = await runCli(["-m", "optional", ...http, "--input-data", optional, "-b", "2"]);
    assert.equal(twice.code, 1, twice.stderr);
    assert.match(
      twice.stderr,
      /^error: For batch sizes larger than 1, the same set of inputs must be specified for each batch\. You cannot use different set of optional inputs for each individual batch\. In one batch of 2, ".*optional\.json" data\[0\] gives INPUT0 and ".*optional\.json" data\[1\] gives INPUT0, INPUT1\n$/,
    );
  },
);

tritonTest(
  "shape checks and misaligned validation data keep perf_analyzer's key phrases",
  async () => {
    assert.equal(
      await refused(["-m", "strings", ...http, "--shape", "INPUT0:2"], {
        data: [{ INPUT0: { content: ["a"], shape: [1] } }],
      }),
      `error: "FILE" data[0].INPUT0: The supplied shape of [1] for input "INPUT0" is incompatible ` +
        "with the model's input shape of [2] (the shape given with the data; --shape INPUT0:2 " +
        "stands in for the model's dims [-1])\n",
    );
    assert.equal(
      await refused(["-m", "optional", ...grpc, "-b", "2"], {
        data: [{ INPUT0: [1, 2] }, { INPUT0: [1, 2, 3] }],
      }),
      "error: can not batch tensors with different shapes together (input 'INPUT0' expected " +
        'shape [2] and received [3]): "FILE" data[0] has [2] and "FILE" data[1] has [3]\n',
    );
    assert.equal(
      await refused(["-m", "optional", ...http], {
        data: [{ INPUT0: [1, 2] }, { INPUT0: [3, 4] }],
        validation_data: [{ OUTPUT0: [1, 2] }],
      }),
      "error: The 'validation_data' field doesn't align with 'data' field in the json file " +
        '"FILE" (1 entries for 2)\n',
    );
  },
);

tritonTest("the shared server stops on SIGTERM", async () => {
  await server!.stop();
});
