/**
 * Whether --profile-export-file may be written. Apart from export.ts so that
 * validating options does not load the export writer and its histograms.
 */

/** The problem with writing the export to `path`, or undefined when it may be written. */
export function exportTargetProblem(path: string, overwrite: boolean): string | undefined {
  if (overwrite) return undefined;
  try {
    Deno.statSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return `File "${path}" given to --profile-export-file already exists; ` +
    "choose another name or add --overwrite";
}
