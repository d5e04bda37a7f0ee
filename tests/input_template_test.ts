/**
 * `inferperf input-template` end to end: the template written from a model's
 * metadata (every input, --shape for variable dims, BYTES, optional inputs
 * marked) is taken by `--input-data` as it is, against the reference server
 * (every datatype) and the real Triton server (tests/_triton.ts).
 */
import assert from "node:assert/strict";
import { runCli, withServer } from "./_helpers.ts";
import { startTriton, triton, tritonTest } from "./_triton.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** Writes the template of `args`' model to a file; returns it and its JSON. */
async function template(
  dir: string,
  args: string[],
): Promise<{ file: string; json: Json }> {
  const file = `${dir}/${args[args.indexOf("-m") + 1]}.json`;
  const cli = await runCli(["input-template", ...args, "-o", file]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stderr, /^Input data for \S+ \(\d+ inputs\) written to /);
  return { file, json: JSON.parse(await Deno.readTextFile(file)) };
}

/** Profiles `args` with the template as its input data: every request must succeed. */
async function accepted(args: string[], file: string): Promise<void> {
  const cli = await runCli([...args, "--input-data", file, "--request-count", "5"]);
  assert.equal(cli.code, 0, cli.stderr + cli.stdout);
  assert.match(cli.stdout, /Request count: 5\n/);
  assert.doesNotMatch(cli.stdout, /Failed requests/);
}

Deno.test("input-template: every datatype, --shape for variable dims, taken by --input-data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_template_" });
  try {
    await withServer(async (server) => {
      const target = ["-u", server.addr];
      // Variable dims without --shape: one line per input, nothing written.
      const missing = await runCli(["input-template", "-m", "identity_all", ...target]);
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr.match(/needs to have its shape fully defined/g)?.length, 14);

      const dtypes = await (await fetch(`http://${server.addr}/v2/models/identity_all`)).json();
      const shapes = dtypes.inputs.flatMap((i: { name: string }) => ["--shape", `${i.name}:3`]);
      const all = await template(dir, ["-m", "identity_all", ...target, ...shapes]);
      assert.deepEqual(all.json.model_inputs.INPUT_BYTES, {
        datatype: "BYTES",
        dims: [-1],
        optional: false,
      });
      assert.deepEqual(all.json.data[0].INPUT_BOOL, { content: [false, false, false], shape: [3] });
      assert.deepEqual(all.json.data[0].INPUT_BYTES, { content: ["", "", ""], shape: [3] });
      await accepted(["-m", "identity_all", ...target], all.file);

      // Fixed dims need no --shape; the written file goes to stdout without -o.
      const simple = await runCli(["input-template", "-m", "simple", ...target]);
      assert.equal(simple.code, 0, simple.stderr);
      assert.deepEqual(Object.keys(JSON.parse(simple.stdout).data[0]), ["INPUT0", "INPUT1"]);
      const strings = await template(dir, [
        ...["-m", "identity_string", ...target, "--string-data", "hello"],
      ]);
      assert.deepEqual(strings.json.data[0].INPUT.content, ["hello"]);
      await accepted(["-m", "identity_string", ...target], strings.file);
      // The README's BYTES example as base64: a 4-byte little-endian length, then the bytes.
      const b64 = { ...strings.json, data: [{ INPUT: { b64: "BQAAAGhlbGxv" } }] };
      await Deno.writeTextFile(strings.file, JSON.stringify(b64));
      await accepted(["-m", "identity_string", ...target], strings.file);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const server = "reason" in triton ? undefined : await startTriton();

tritonTest(
  "input-template: Triton's models, optional inputs marked, over HTTP and gRPC",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "inferperf_template_" });
    try {
      const http = ["-u", server!.http];
      const grpc = ["-i", "grpc", "-u", server!.grpc];
      const optional = await template(dir, [
        ...["-m", "optional", ...grpc, "--shape", "INPUT0:4", "--shape", "INPUT1:2"],
      ]);
      assert.deepEqual(optional.json.model_inputs, {
        INPUT0: { datatype: "FP32", dims: [-1], optional: false },
        INPUT1: { datatype: "FP32", dims: [-1], optional: true },
      });
      await accepted(["-m", "optional", ...grpc], optional.file);
      for (const model of ["identity_fp32", "mixed", "image"]) {
        const written = await template(dir, ["-m", model, ...http]);
        await accepted(["-m", model, ...http], written.file);
      }
      const strings = await template(dir, ["-m", "strings", ...http, "--shape", "INPUT0:2"]);
      assert.deepEqual(strings.json.data[0].INPUT0, { content: ["", ""], shape: [2] });
      await accepted(["-m", "strings", ...grpc], strings.file);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

tritonTest("input-template: the shared server stops", async () => {
  await server!.stop();
});
