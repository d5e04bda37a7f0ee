/**
 * The C API's generated x86-64 code (native.ts: the response allocator;
 * completions.ts: the completion queue), called as Triton calls it, in a
 * child with --allow-ffi.
 */
import assert from "node:assert/strict";

const CHECK = new URL("./_native_code.ts", import.meta.url).pathname;
const applies = Deno.build.os === "linux" && Deno.build.arch === "x86_64";

Deno.test({
  name: "native code: the allocator allocates, reports CPU memory and frees; the queue delivers",
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
    // The release callback ignores its flags; the release handler does not take them.
    assert.deepEqual(
      report.queued,
      Array.from({ length: 1000 }, (_, j) => {
        const i = j + 1;
        return i % 2 === 1 ? `response ${i * 16} ${i} ${i}` : `release ${i * 16} ${i}`;
      }),
      "every call delivered once, in order, with its arguments",
    );
  },
});
