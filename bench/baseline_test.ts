import assert from "node:assert/strict";
import {
  addWorktree,
  compareCase,
  defaultBaselineFlag,
  defaultRef,
  resolveBaseline,
  roundOrder,
  rowKeys,
  spread,
} from "./baseline.ts";
import type { BenchRow, CaseResult } from "./types.ts";

Deno.test("roundOrder alternates which side goes first: ABBA ABBA", () => {
  assert.deepEqual(roundOrder(4), [
    ["current", "baseline"],
    ["baseline", "current"],
    ["current", "baseline"],
    ["baseline", "current"],
  ]);
  assert.deepEqual(roundOrder(1), [["current", "baseline"]]);
  assert.deepEqual(roundOrder(0), []);
});

Deno.test("spread is the median and range of the finite values", () => {
  assert.deepEqual(spread([1.02, 0.9, 0.95, NaN]), { median: 0.95, min: 0.9, max: 1.02, count: 3 });
  assert.deepEqual(spread([1, 2, 3, 4]), { median: 2.5, min: 1, max: 4, count: 4 });
  assert.equal(spread([NaN, Infinity]), undefined);
  assert.equal(spread([]), undefined);
});

const row = (name: string, inferperf: number, more: Partial<BenchRow> = {}): BenchRow => ({
  name,
  unit: "infer/s",
  inferperf,
  ...more,
});
const result = (rows: BenchRow[]): CaseResult => ({ id: "http", title: "HTTP", rows, notes: [] });

Deno.test("rowKeys pair rows whose names carry measured numbers, and repeated rows by position", () => {
  const a = rowKeys(result([row("Cost (rate 4998/s, 31 s)", 1), row("unary c=64", 2)]));
  const b = rowKeys(result([row("Cost (rate 5001/s, 30 s)", 1), row("unary c=64", 3)]));
  assert.deepEqual(a, b);
  const twice = rowKeys(result([row("unary c=64", 1), row("unary c=64", 2)]));
  assert.notEqual(twice[0], twice[1]);
});

Deno.test("compareCase: current's medians, the ratio per round and its spread", () => {
  const current = [
    result([row("c=64", 110, { reference: 100, ratio: 1.1, target: ">= 1", met: true })]),
    result([row("c=64", 90, { reference: 100, ratio: 0.9, target: ">= 1", met: false })]),
    result([row("c=64", 100, { reference: 95, ratio: 1.05, target: ">= 1", met: true })]),
  ];
  const baseline = [
    result([row("c=64", 100)]),
    result([row("c=64", 100)]),
    undefined, // that run failed
  ];
  const { rows, rounds } = compareCase(current, baseline);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].inferperf, 100);
  assert.equal(rows[0].reference, 100);
  assert.equal(rows[0].ratio, 1.05);
  assert.equal(rows[0].met, true);
  assert.match(rows[0].note!, /^met in 2 of 3 rounds/);
  assert.deepEqual(rows[0].baseline, {
    figure: 100,
    ratio: { median: 1, min: 0.9, max: 1.1, count: 2 },
  });
  assert.deepEqual(rounds[0].current, [110, 90, 100]);
  assert.deepEqual(rounds[0].baseline, [100, 100, NaN]);
});

Deno.test("compareCase: a row the baseline lacks has no baseline figure", () => {
  const { rows } = compareCase([result([row("new row", 5)])], [result([])]);
  assert.equal(rows[0].baseline, undefined);
  assert.equal(rows[0].inferperf, 5);
});

Deno.test("defaultRef: a release tag, else the main commit this code started from", () => {
  assert.equal(
    defaultRef({ releaseTag: "v1.2.0", head: "h", main: "h", mergeBase: "h" }),
    "v1.2.0",
  );
  // On main (or without main): the commit before.
  assert.equal(defaultRef({ head: "h", main: "h", mergeBase: "h" }), "HEAD~1");
  assert.equal(defaultRef({ head: "h" }), "HEAD~1");
  // A branch off main: where it left main.
  assert.equal(defaultRef({ head: "h", main: "m", mergeBase: "b" }), "b");
  // An older commit of main: the one before it.
  assert.equal(defaultRef({ head: "h", main: "m", mergeBase: "h" }), "HEAD~1");
});

Deno.test("defaultBaselineFlag: --baseline without a value takes the default", () => {
  assert.deepEqual(defaultBaselineFlag(["--baseline"]), ["--baseline="]);
  assert.deepEqual(defaultBaselineFlag(["--baseline", "--cases", "http"]), [
    "--baseline=",
    "--cases",
    "http",
  ]);
  assert.deepEqual(defaultBaselineFlag(["--baseline", "358f1b1"]), ["--baseline", "358f1b1"]);
  assert.deepEqual(defaultBaselineFlag(["--baseline=v1"]), ["--baseline=v1"]);
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

/** A repository with two commits on main and one on a branch, and a node_modules. */
async function repository(): Promise<{ root: string; commits: string[] }> {
  const root = await Deno.makeTempDir({ prefix: "inferperf-bench-git-" });
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "user.email", "bench@example.com");
  await git(root, "config", "user.name", "bench");
  const commits: string[] = [];
  for (const name of ["one", "two"]) {
    await Deno.writeTextFile(`${root}/${name}.txt`, name);
    await git(root, "add", ".");
    await git(root, "commit", "-q", "-m", name);
    commits.push(await git(root, "rev-parse", "HEAD"));
  }
  await Deno.mkdir(`${root}/node_modules`);
  return { root, commits };
}

Deno.test("resolveBaseline: REF as a commit, the default, and a REF that is none", async () => {
  const { root, commits } = await repository();
  try {
    assert.equal((await resolveBaseline("main~1", root)).commit, commits[0]);
    assert.equal((await resolveBaseline(undefined, root)).commit, commits[0]);
    await git(root, "checkout", "-q", "-b", "work");
    await Deno.writeTextFile(`${root}/three.txt`, "three");
    await git(root, "add", ".");
    await git(root, "commit", "-q", "-m", "three");
    assert.equal((await resolveBaseline(undefined, root)).commit, commits[1]);
    await git(root, "tag", "v0.1.0", commits[0]);
    const tagged = await resolveBaseline(undefined, root);
    assert.equal(tagged.ref, "v0.1.0");
    assert.equal(tagged.commit, commits[0]);
    await assert.rejects(resolveBaseline("no-such-ref", root), /"no-such-ref" is not a commit/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("addWorktree checks the commit out with the same node_modules; remove() leaves nothing", async () => {
  const { root, commits } = await repository();
  try {
    const worktree = await addWorktree(root, commits[0]);
    assert.equal(await Deno.readTextFile(`${worktree.path}/one.txt`), "one");
    await assert.rejects(Deno.stat(`${worktree.path}/two.txt`), Deno.errors.NotFound);
    assert.equal(
      await Deno.realPath(`${worktree.path}/node_modules`),
      await Deno.realPath(`${root}/node_modules`),
    );
    worktree.remove();
    worktree.remove();
    await assert.rejects(Deno.stat(worktree.path), Deno.errors.NotFound);
    assert.equal((await git(root, "worktree", "list")).split("\n").length, 1);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
