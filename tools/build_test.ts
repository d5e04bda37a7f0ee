import assert from "node:assert/strict";
import { BuildError, compile } from "./build.ts";

async function withDenortBin<T>(value: string, fn: () => Promise<T>): Promise<T> {
  const saved = Deno.env.get("DENORT_BIN");
  Deno.env.set("DENORT_BIN", value);
  try {
    return await fn();
  } finally {
    if (saved === undefined) Deno.env.delete("DENORT_BIN");
    else Deno.env.set("DENORT_BIN", saved);
  }
}

Deno.test("compile rejects a target the release does not build", async () => {
  await assert.rejects(compile({ target: "riscv64gc-unknown-linux-gnu" }), {
    name: "BuildError",
    message: /^Unknown target "riscv64gc-unknown-linux-gnu": use one of "x86_64-unknown-linux-gnu"/,
  });
});

Deno.test("compile explains a missing DENORT_BIN before doing any work", async () => {
  await withDenortBin("/nonexistent/denort", async () => {
    await assert.rejects(compile({ target: "aarch64-unknown-linux-gnu" }), (error) => {
      assert.ok(error instanceof BuildError);
      assert.equal(
        error.message,
        `DENORT_BIN is "/nonexistent/denort", which does not exist: fetch ` +
          `denort-aarch64-unknown-linux-gnu.zip of Deno ${Deno.version.deno} from ` +
          "https://github.com/denoland/deno/releases on a connected machine, copy it to this " +
          "host, unzip it and set DENORT_BIN to the denort binary inside",
      );
      return true;
    });
  });
});

Deno.test({
  name: "compile refuses a DENORT_BIN that is not denort and removes the binary",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "inferperf_compile_" });
    try {
      const output = `${dir}/inferperf`;
      await withDenortBin("/bin/true", async () => {
        await assert.rejects(compile({ output }), {
          name: "BuildError",
          message: new RegExp(
            `^The compiled "${output}" does not run inferperf .*: DENORT_BIN "/bin/true" is not ` +
              `a denort binary of Deno ${Deno.version.deno.replaceAll(".", "\\.")}$`,
          ),
        });
      });
      const left = [];
      for await (const entry of Deno.readDir(dir)) left.push(entry.name);
      assert.deepEqual(left, ["inferperf.js"], "the bundle stays, the broken binary goes");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
