/**
 * Report files: checked writable before any load starts, so a typo in a path
 * does not cost a whole run, and written through a temporary file renamed
 * over the target, so a disk that fills or a directory that disappears
 * during the run never leaves a truncated report behind.
 */

/** Report files that cannot be written; each entry of `errors` names a file and why. */
export class OutputError extends Error {
  override name = "OutputError";
  constructor(readonly errors: string[]) {
    super(errors.join("\n"));
  }
}

/** Writing a report failed during or after the run; what was measured is elsewhere intact. */
export class WriteError extends Error {
  override name = "WriteError";
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

/** A report file a run will write, and the flag that named it. */
export interface OutputTarget {
  path: string;
  flag: string;
  /** A directory the run writes files into, created when missing. */
  directory?: boolean;
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  if (slash < 0) return ".";
  return slash === 0 ? "/" : path.slice(0, slash);
}

/** The OS's reason without Deno's "(os error N): op 'path'" tail. */
export function outputReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\(os error \d+\).*$/s, "").replace(/\s+/g, " ").toLowerCase();
}

function statOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** Creates and removes a file in `dir`: the one sure test that files can be made there. */
function probeDirectory(dir: string): string | undefined {
  const probe = `${dir}/.inferperf-probe-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  try {
    Deno.openSync(probe, { write: true, createNew: true }).close();
    Deno.removeSync(probe);
    return undefined;
  } catch (error) {
    // A refused Deno permission is reported by main with the flag that grants it.
    if (error instanceof Deno.errors.NotCapable) throw error;
    return outputReason(error);
  }
}

/**
 * Why `path`, given to `flag`, cannot be written (or, with `directory`, used
 * as a directory to write into); undefined when it can.
 */
export function outputProblem(
  path: string,
  options: { flag: string; directory?: boolean },
): string | undefined {
  return options.directory ? directoryProblem(path, options.flag) : fileProblem(path, options.flag);
}

/**
 * Opens the file itself for writing, creating it only for the test: that
 * needs no permission beyond writing that one file (--allow-write=FILE).
 */
function fileProblem(path: string, flag: string): string | undefined {
  try {
    try {
      Deno.openSync(path, { write: true, createNew: true }).close();
      Deno.removeSync(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      Deno.openSync(path, { write: true }).close();
    }
    return undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw error;
    if (error instanceof Deno.errors.IsADirectory) {
      return `${flag} "${path}" is a directory; give a file name`;
    }
    if (error instanceof Deno.errors.NotFound) {
      return `${flag} "${path}": directory "${parentOf(path)}" does not exist`;
    }
    return `${flag} "${path}" cannot be written (${outputReason(error)})`;
  }
}

function directoryProblem(path: string, flag: string): string | undefined {
  const info = statOrUndefined(path);
  if (info && !info.isDirectory) return `${flag} "${path}" is not a directory`;
  if (info) {
    const reason = probeDirectory(path);
    return reason && `${flag} "${path}": cannot create files there (${reason})`;
  }
  // A missing directory is created with its parents: what matters is the nearest that exists.
  let parent = parentOf(path);
  let parentInfo = statOrUndefined(parent);
  while (!parentInfo && parent !== parentOf(parent)) {
    parent = parentOf(parent);
    parentInfo = statOrUndefined(parent);
  }
  if (!parentInfo?.isDirectory) return `${flag} "${path}": "${parent}" is not a directory`;
  const reason = probeDirectory(parent);
  return reason && `${flag} "${path}": cannot create it in "${parent}" (${reason})`;
}

/** Throws an OutputError naming every target that cannot be written. */
export function checkOutputs(targets: readonly OutputTarget[]): void {
  const errors = targets.flatMap((target) => outputProblem(target.path, target) ?? []);
  if (errors.length > 0) throw new OutputError(errors);
}

/**
 * Writes `text` to `path` through `path.PID.tmp` and a rename, so the target
 * holds either its old content or the whole new one.
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${path}.${Deno.pid}.tmp`;
  try {
    try {
      Deno.writeTextFileSync(temp, text);
    } catch (error) {
      // Granted the file alone (--allow-write=FILE), Deno refuses the temporary name.
      if (!(error instanceof Deno.errors.NotCapable)) throw error;
      Deno.writeTextFileSync(path, text);
      return;
    }
    Deno.renameSync(temp, path);
  } catch (error) {
    try {
      Deno.removeSync(temp);
    } catch {
      // The temporary file was never created, or its directory is gone.
    }
    if (error instanceof Deno.errors.NotCapable) throw error;
    throw new WriteError(`Cannot write "${path}": ${outputReason(error)}`, path);
  }
}

/**
 * Runs every write even when one fails, so one bad file does not cost the
 * others; then throws the first failure.
 */
export function writeAll(writes: ReadonlyArray<() => void>): void {
  let first: unknown;
  for (const write of writes) {
    try {
      write();
    } catch (error) {
      first ??= error;
    }
  }
  if (first !== undefined) throw first;
}
