/**
 * A report written while the run goes on: under a temporary name beside its
 * target, renamed into place when finished, so the target either does not
 * exist or is complete. A failed write (disk full, directory removed) stops
 * the file for the rest of the run, which goes on; finish() throws it.
 */
import { outputReason, WriteError } from "./output_file.ts";

export class PartialFile {
  readonly path: string;
  readonly #tempPath: string;
  /** What the file is, for the error: "the profile export". */
  readonly #what: string;
  #file: Deno.FsFile | undefined;
  #failure: WriteError | undefined;

  constructor(path: string, what: string) {
    this.path = path;
    this.#what = what;
    this.#tempPath = `${path}.${Deno.pid}.partial`;
  }

  /** Open and writable (opened, and no write failed). */
  get writable(): boolean {
    return this.#file !== undefined;
  }

  /** Creates the temporary file; false when it cannot be (the failure is kept). */
  open(): boolean {
    try {
      this.#file = Deno.openSync(this.#tempPath, { write: true, create: true, truncate: true });
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  write(bytes: Uint8Array): void {
    const file = this.#file;
    if (file === undefined || bytes.byteLength === 0) return;
    let written = 0;
    try {
      while (written < bytes.byteLength) written += file.writeSync(bytes.subarray(written));
    } catch (error) {
      this.fail(error);
    }
  }

  /** Closes the file and renames it into place; throws the first failure. */
  finish(): void {
    const file = this.#file;
    if (file !== undefined) {
      file.close();
      this.#file = undefined;
      try {
        Deno.renameSync(this.#tempPath, this.path);
      } catch (error) {
        this.fail(error);
      }
    }
    if (this.#failure) throw this.#failure;
  }

  /** Stops the file after `error` and removes what was written; a refused permission is thrown. */
  fail(error: unknown): void {
    if (error instanceof Deno.errors.NotCapable) throw error;
    this.#failure ??= new WriteError(
      `Cannot write ${this.#what} "${this.path}": ${outputReason(error)}`,
      this.path,
    );
    try {
      this.#file?.close();
      Deno.removeSync(this.#tempPath);
    } catch {
      // Already closed, or the directory is gone with the file.
    }
    this.#file = undefined;
  }
}
