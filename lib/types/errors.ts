/**
 * The error every stage that checks the user's options throws: the command
 * line parser first, the run itself for what only the model reveals (main.ts
 * then points to --help).
 */

/** A configuration error; `errors` holds every problem found. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(readonly errors: string[]) {
    super(errors.join("\n"));
  }
}
