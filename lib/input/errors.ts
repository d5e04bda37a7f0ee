/** The error of input data that cannot be read or does not fit the model. */

/**
 * Input data that cannot be read or does not fit the model. The message is
 * one line that starts with where the problem is (file, JSON path, option).
 */
export class InputError extends Error {
  override name = "InputError";
}
