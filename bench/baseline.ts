/**
 * `--baseline REF`: every selected case runs for the code being measured and
 * for REF's code, checked out into a temporary git worktree, in paired rounds
 * whose order alternates (current then baseline, baseline then current, ...),
 * so that a change is compared with the code before it on the same machine at
 * the same moment. Each figure gets the spread of its per-round ratios.
 */
import { median } from "./process.ts";
import type { BenchRow, CaseResult, Spread } from "./types.ts";

export type Side = "current" | "baseline";

/** Round r runs current first when r is even and baseline first when odd: ABBA ABBA... */
export function roundOrder(rounds: number): Side[][] {
  return Array.from(
    { length: rounds },
    (_, r): Side[] => r % 2 === 0 ? ["current", "baseline"] : ["baseline", "current"],
  );
}

/** Median, min and max of finite values; undefined when there are none. */
export function spread(values: readonly number[]): Spread | undefined {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return undefined;
  return {
    median: median(finite),
    min: Math.min(...finite),
    max: Math.max(...finite),
    count: finite.length,
  };
}

/**
 * What pairs a row with the same row of another run: its case, its name with
 * the numbers taken out (names carry measured rates), its unit, and how many
 * rows before it had the same three.
 */
export function rowKeys(result: CaseResult): string[] {
  const seen = new Map<string, number>();
  return result.rows.map((row) => {
    const key = `${result.id}|${row.name.replace(/\d[\d.,]*/g, "#")}|${row.unit}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return `${key}|${n}`;
  });
}

/** One row's figures round by round (NaN where a run failed). */
export interface RowRounds {
  name: string;
  current: number[];
  baseline: number[];
}

function byKey(rounds: readonly (CaseResult | undefined)[]): Map<string, BenchRow[]> {
  const rows = new Map<string, BenchRow[]>();
  rounds.forEach((result, r) => {
    if (result === undefined) return;
    const keys = rowKeys(result);
    result.rows.forEach((row, i) => {
      const list = rows.get(keys[i]) ?? [];
      list[r] = row;
      rows.set(keys[i], list);
    });
  });
  return rows;
}

/**
 * The rows of one case over paired rounds (`current[r]` and `baseline[r]` ran
 * in round r; undefined where that run failed), in the current side's order:
 * current's medians, the note of its round nearest the median, a target met
 * when met in most rounds, and the baseline's median figure with the median
 * and range of the per-round ratios current / baseline.
 */
export function compareCase(
  current: readonly (CaseResult | undefined)[],
  baseline: readonly (CaseResult | undefined)[],
): { rows: BenchRow[]; rounds: RowRounds[] } {
  const base = byKey(baseline);
  const count = Math.max(current.length, baseline.length);
  const rows: BenchRow[] = [];
  const rounds: RowRounds[] = [];
  for (const [key, list] of byKey(current)) {
    const figures = (of: BenchRow[]) =>
      Array.from({ length: count }, (_, r) => of[r]?.inferperf ?? NaN);
    const cur = figures(list);
    const old = figures(base.get(key) ?? []);
    const measured = list.filter((r) => r !== undefined);
    const mid = median(measured.map((r) => r.inferperf));
    const nearest = measured.reduce((a, b) =>
      Math.abs(b.inferperf - mid) < Math.abs(a.inferperf - mid) ? b : a
    );
    const medianOf = (of: (r: BenchRow) => number | undefined) => {
      const values = measured.map(of).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : median(values);
    };
    const judged = measured.filter((r) => r.met !== undefined);
    const met = judged.filter((r) => r.met).length;
    const baselineFigure = spread(old);
    const ratio = spread(cur.map((c, r) => c / old[r]));
    rows.push({
      ...nearest,
      inferperf: mid,
      ...(nearest.reference === undefined ? {} : { reference: medianOf((r) => r.reference) }),
      ...(nearest.ratio === undefined ? {} : { ratio: medianOf((r) => r.ratio) }),
      ...(judged.length === 0 ? {} : {
        met: met * 2 > judged.length,
        note: [`met in ${met} of ${judged.length} rounds`, nearest.note].filter(Boolean).join("; "),
      }),
      ...(baselineFigure === undefined ? {} : {
        baseline: { figure: baselineFigure.median, ...(ratio === undefined ? {} : { ratio }) },
      }),
    });
    rounds.push({ name: nearest.name, current: cur, baseline: old });
  }
  return { rows, rounds };
}

/** Where the baseline defaults to, from what git says of the repository. */
export interface RepositoryState {
  /** The latest release tag reachable from HEAD, if any. */
  releaseTag?: string;
  head: string;
  /** main's commit, when there is a main branch. */
  main?: string;
  /** The merge base of HEAD and main. */
  mergeBase?: string;
}

/**
 * The latest release tag; else the main commit this code started from: the
 * one before on main when HEAD is main (or has no main), the merge base when
 * HEAD is a branch off main.
 */
export function defaultRef(state: RepositoryState): string {
  if (state.releaseTag !== undefined) return state.releaseTag;
  const onBranch = state.main !== undefined && state.main !== state.head &&
    state.mergeBase !== undefined && state.mergeBase !== state.head;
  return onBranch ? state.mergeBase! : "HEAD~1";
}

async function git(root: string, args: string[]): Promise<string | undefined> {
  const output = await new Deno.Command("git", {
    args,
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return output.code === 0 ? new TextDecoder().decode(output.stdout).trim() : undefined;
}

export interface Baseline {
  /** As given, or the default chosen. */
  ref: string;
  commit: string;
  /** `git log --oneline` of the commit, for the report. */
  title: string;
}

/** REF (or the default, see defaultRef) as a commit of the repository at `root`. */
export async function resolveBaseline(ref: string | undefined, root: string): Promise<Baseline> {
  const chosen = ref ?? defaultRef({
    releaseTag: await git(root, ["describe", "--tags", "--abbrev=0", "--match", "v[0-9]*"]),
    head: (await git(root, ["rev-parse", "HEAD"])) ?? "",
    main: await git(root, ["rev-parse", "--verify", "--quiet", "main"]),
    mergeBase: await git(root, ["merge-base", "HEAD", "main"]),
  });
  const commit = await git(root, ["rev-parse", "--verify", "--quiet", `${chosen}^{commit}`]);
  if (commit === undefined) throw new Error(`--baseline: "${chosen}" is not a commit of ${root}`);
  const title = await git(root, ["log", "-1", "--format=%h %s", commit]) ?? commit;
  return { ref: chosen, commit, title: title.length > 100 ? `${title.slice(0, 97)}...` : title };
}

/** A checkout of the baseline beside the repository; remove() is idempotent and synchronous (it runs on Ctrl-C and exit). */
export interface Worktree {
  path: string;
  remove(): void;
}

/**
 * Checks `commit` out into a temporary detached worktree of the repository at
 * `root`, sharing its node_modules.
 */
export async function addWorktree(root: string, commit: string): Promise<Worktree> {
  const path = await Deno.makeTempDir({ prefix: "inferperf-baseline-" });
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    new Deno.Command("git", {
      args: ["worktree", "remove", "--force", path],
      cwd: root,
      stdout: "null",
      stderr: "null",
    }).outputSync();
    // Whatever git left (it refuses a directory it does not know).
    try {
      Deno.removeSync(path, { recursive: true });
    } catch {
      // Already gone.
    }
    new Deno.Command("git", { args: ["worktree", "prune"], cwd: root, stderr: "null" })
      .outputSync();
  };
  try {
    if (await git(root, ["worktree", "add", "--detach", path, commit]) === undefined) {
      throw new Error(`git worktree add ${path} ${commit} failed`);
    }
    await Deno.symlink(await Deno.realPath(`${root}/node_modules`), `${path}/node_modules`);
  } catch (error) {
    remove();
    throw error;
  }
  return { path, remove };
}

/** `--baseline` given without a value (last, or before another option) as `--baseline=`, the default. */
export function defaultBaselineFlag(args: readonly string[]): string[] {
  return args.map((arg, i) =>
    arg === "--baseline" && (i === args.length - 1 || args[i + 1].startsWith("--"))
      ? "--baseline="
      : arg
  );
}
