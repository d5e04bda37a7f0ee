/** What the tokenizers of tokenizer.ts and hf_tokenizer.ts give the run. */

/** Counts tokens as the named model family does, without special tokens. */
export interface Tokenizer {
  readonly name: string;
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
  /**
   * A model's own tokenizer (--tokenizer DIR): its count of an answer is
   * compared with the server's usage (a built-in one's would be another
   * vocabulary's).
   */
  readonly fromModel?: boolean;
}

/** A model's chat template (--apply-chat-template). */
export interface ChatTemplate {
  /** The file it came from, for messages. */
  readonly file: string;
  /**
   * The conversation as the server renders it before tokenizing: the
   * template over `messages` with add_generation_prompt and the model's
   * special tokens (the BOS text the template writes, if any). Throws an
   * InputError naming the file when the template fails.
   */
  render(messages: readonly unknown[]): string;
}
