/**
 * The C API's native response allocator (generated x86-64 code calling
 * malloc and free), called as Triton calls it, in a child with --allow-ffi.
 */
import assert from "node:assert/strict";

const CHECK = new URL("./_native_allocator.ts", import.meta.url).pathname;
const applies = Deno.build.os === "linux" && Deno.build.arch === "x86_64";

Deno.test({
  name: "the native allocator allocates, reports CPU memory and frees",
  ignore: !applies,
  async fn() {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-ffi", "--allow-read", CHECK],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(report.native, true, "made on x86-64 Linux");
    for (const r of report.results) {
      assert.deepEqual(r, {
        size: r.size,
        error: true,
        buffer: r.size === 0 ? "null" : "set",
        userp: "0",
        type: 0,
        typeId: "0",
        released: true,
      });
    }
  },
});
