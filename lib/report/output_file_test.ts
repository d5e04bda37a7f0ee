import assert from "node:assert/strict";
import {
  checkOutputs,
  outputProblem,
  writeAll,
  WriteError,
  writeFileAtomic,
} from "./output_file.ts";

Deno.test("outputs are checked without leaving files behind", () => {
  const dir = Deno.makeTempDirSync();
  try {
    assert.equal(outputProblem(`${dir}/new.csv`, { flag: "-f" }), undefined);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "the probe file is removed");
    Deno.writeTextFileSync(`${dir}/old.csv`, "keep");
    assert.equal(outputProblem(`${dir}/old.csv`, { flag: "-f" }), undefined);
    assert.equal(Deno.readTextFileSync(`${dir}/old.csv`), "keep", "an existing file is kept");
    assert.equal(outputProblem(`${dir}/a/b/ckpt`, { flag: "-c", directory: true }), undefined);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["old.csv"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("every unwritable output is named at once, one line each", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/file`, "");
    const targets = [
      { path: "/nonexistent/dir/x.csv", flag: "-f" },
      { path: dir, flag: "--summary-json" },
      { path: `${dir}/file`, flag: "--checkpoint-directory", directory: true },
      { path: `${dir}/fine.html`, flag: "--report-html" },
    ];
    assert.throws(() => checkOutputs(targets), {
      name: "OutputError",
      errors: [
        '-f "/nonexistent/dir/x.csv": directory "/nonexistent/dir" does not exist',
        `--summary-json "${dir}" is a directory; give a file name`,
        `--checkpoint-directory "${dir}/file" is not a directory`,
      ],
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an atomic write replaces the whole file or nothing; every write is attempted", () => {
  const dir = Deno.makeTempDirSync();
  try {
    writeFileAtomic(`${dir}/r.csv`, "a,b\n");
    writeFileAtomic(`${dir}/r.csv`, "c,d\n");
    assert.equal(Deno.readTextFileSync(`${dir}/r.csv`), "c,d\n");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["r.csv"]);
    let later = false;
    assert.throws(
      () =>
        writeAll([
          () => writeFileAtomic(`${dir}/gone/r.csv`, "x"),
          () => later = true,
        ]),
      (error: unknown) =>
        error instanceof WriteError &&
        /^Cannot write ".*\/gone\/r\.csv": no such file or directory$/.test(error.message),
    );
    assert.ok(later, "the second write ran after the first failed");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
