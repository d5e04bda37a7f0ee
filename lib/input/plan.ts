/** The input part of a run's plan: what data the requests carry (the Input Data options of --help). */
import type { InputDataSpec } from "./input_data.ts";
import type { SyntheticPrompts } from "./llm_data.ts";

export interface InputPlan {
  inputData: InputDataSpec;
  /** --shape NAME:DIMS for variable dimensions. */
  shapes: Map<string, number[]>;
  stringLength: number;
  stringData?: string;
  validationTolerance: number;
  /** --service-kind openai without payload files: the prompts to make up. */
  syntheticPrompts: SyntheticPrompts;
  /** --tokenizer: a built-in name or a model directory; counts prompts and answers. */
  tokenizer: string;
  /**
   * --apply-chat-template (chat endpoints, --tokenizer DIR): prompts and
   * their ISL are the model's chat template rendered over the messages, as
   * the server tokenizes them.
   */
  applyChatTemplate: boolean;
  /**
   * AIPerf's several models in one run (--service-kind openai, -m a,b): the
   * models the requests name, in turn or at random
   * (--model-selection-strategy); absent: -m's one model.
   */
  models?: { names: readonly string[]; selection: "round_robin" | "random" };
}
