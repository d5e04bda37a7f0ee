/**
 * --service-kind tfserving and torchserve end to end against the reference
 * server (which serves TF Serving's PredictionService on its gRPC port and
 * TorchServe's /predictions on its HTTP port), with perf_analyzer's
 * invocations from its documentation; client-side statistics only.
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";

Deno.test("tfserving: Predict over gRPC with the signature's inputs, client statistics only", async () => {
  await withServer(async (server) => {
    const r = await runCli([
      "-m",
      "simple",
      "--service-kind",
      "tfserving",
      "-i",
      "grpc",
      "-b",
      "2",
      "--request-count",
      "40",
      "-u",
      server.grpcAddr,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Service Kind: TENSORFLOW_SERVING\n/);
    assert.match(r.stdout, / {2}Batch size: 2\n/);
    assert.match(r.stdout, /Request count: 40\n/);
    assert.match(r.stdout, /Avg gRPC time: \d+ usec/);
    assert.doesNotMatch(r.stdout, /Server: /);

    const wrong = await runCli([
      "-m",
      "simple",
      "--service-kind",
      "tfserving",
      "--model-signature-name",
      "classify",
      "-u",
      server.grpcAddr,
    ]);
    assert.equal(wrong.code, 99);
    assert.match(wrong.stderr, /Serving signature name: "classify" not found in signature def/);
  });
});

Deno.test("torchserve: perf_analyzer's TORCHSERVE_INPUT example as written", async () => {
  await withServer(async (server) => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeFile(`${dir}/kitten_small.jpg`, new Uint8Array(2048).map((_, i) => i));
      // The data.json of perf_analyzer's documentation, spacing included.
      await Deno.writeTextFile(
        `${dir}/data.json`,
        ' {\n   "data" :\n    [\n       {\n         "TORCHSERVE_INPUT" : ["kitten_small.jpg"]\n' +
          "       }\n     ]\n }\n",
      );
      const r = await runCli([
        "-m",
        "identity_image",
        "--service-kind",
        "torchserve",
        "-i",
        "http",
        "-u",
        server.addr,
        "-b",
        "1",
        "--request-count",
        "40",
        "--input-data",
        "data.json",
      ], { cwd: dir });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /Service Kind: TORCHSERVE\n/);
      assert.match(r.stdout, /Request count: 40\n/);
      assert.match(r.stdout, /Avg HTTP time: \d+ usec \(send\/recv \d+ usec/);
      assert.doesNotMatch(r.stdout, /Server: /);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("service kinds and shared memory refuse what they can not do, clearly", async () => {
  const cuda = await runCli(["-m", "simple", "--shared-memory", "cuda"]);
  assert.equal(cuda.code, 1);
  assert.match(cuda.stderr, /Value "cuda" of --shared-memory needs CUDA/);
  const torch = await runCli(["-m", "r", "--service-kind", "torchserve", "-i", "grpc"]);
  assert.equal(torch.code, 1);
  assert.match(torch.stderr, /--service-kind torchserve needs -i http\n/);
  assert.match(torch.stderr, /--service-kind torchserve needs --input-data FILE\.json/);
});
