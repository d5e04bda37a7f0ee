/** The input part of a run's plan: what data the requests carry (the Input Data options of --help). */
import type { InputDataSpec } from "./input_data.ts";
import type { SyntheticPrompts } from "./llm_data.ts";
import type { TokenizerName } from "./tokenizer.ts";

export interface InputPlan {
  inputData: InputDataSpec;
  /** --shape NAME:DIMS for variable dimensions. */
  shapes: Map<string, number[]>;
  stringLength: number;
  stringData?: string;
  validationTolerance: number;
  /** --service-kind openai without payload files: the prompts to make up. */
  syntheticPrompts: SyntheticPrompts;
  /** --tokenizer: counts prompts, and answers without usage. */
  tokenizer: TokenizerName;
  /**
   * AIPerf's several models in one run (--service-kind openai, -m a,b): the
   * models the requests name, in turn or at random
   * (--model-selection-strategy); absent: -m's one model.
   */
  models?: { names: readonly string[]; selection: "round_robin" | "random" };
}
