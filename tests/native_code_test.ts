/**
 * The C API's generated x86-64 code (native.ts: the response allocator;
 * completions.ts: the completion queue), called as Triton calls it, in a
 * child with --allow-ffi.
 */
import assert from "node:assert/strict";

const CHECK = new URL("./_native_code.ts", import.meta.url).pathname;
const applies = Deno.build.os === "linux" && Deno.build.arch === "x86_64";

Deno.test({
  name:
    "native code: the allocator hands out regions or allocates, reports CPU memory and frees; the queue delivers",
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
    const cpu = { type: 0, typeId: "0", released: true };
    for (const r of report.results) {
      assert.deepEqual(r, {
        size: r.size,
        error: "none",
        buffer: r.size === 0 ? "null" : "set",
        userp: "0",
        ...cpu,
      });
    }
    // --shared-memory system: outputs with a region are written there (and not freed), or fail
    // with perf_analyzer's error when too large; others are allocated.
    assert.deepEqual(report.regions, [
      { name: "B", size: 16, error: "none", buffer: "region B", userp: "1", ...cpu },
      { name: "A", size: 1, error: "none", buffer: "region A", userp: "1", ...cpu },
      { name: "B", size: 17, error: "made", buffer: "null", userp: "0", ...cpu },
      { name: "C", size: 8, error: "none", buffer: "heap", userp: "0", ...cpu },
      { name: "A", size: 0, error: "none", buffer: "null", userp: "0", ...cpu },
    ]);
    assert.deepEqual(report.errors, [{
      code: 1,
      message: "shared memory size specified with the request for output 'B' (16 bytes) should " +
        "be at least 17 bytes to hold the results",
    }]);
    assert.deepEqual(report.regionB, new Array(16).fill(0xab), "the caller wrote into the region");
    assert.equal(report.tables, true, "a distinct request's regions are made once");
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
