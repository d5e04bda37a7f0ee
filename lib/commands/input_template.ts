/**
 * `inferperf input-template -m MODEL [-o FILE]`: asks the server for the
 * model's metadata and configuration (any service kind with Triton's model
 * API, the C API too) and writes an input-data JSON for it, which
 * `--input-data` then takes as it is (lib/input/template.ts).
 */
import type { ProfilePlan } from "../profile/plan.ts";
import { createClient } from "../protocol/kinds/mod.ts";
import { formatTemplate, inputTemplate } from "../input/template.ts";
import { writeFileAtomic } from "../report/output_file.ts";
import type { Outcome } from "./outcome.ts";

export async function inputTemplateCommand(
  config: ProfilePlan,
  options: { output?: string },
): Promise<Outcome> {
  const client = await createClient(config);
  try {
    const model = await client.modelInfo(config.model, config.modelVersion);
    const text = `${
      formatTemplate(inputTemplate(model.inputs, {
        shapes: config.shapes,
        ...(config.stringData === undefined ? {} : { stringData: config.stringData }),
      }))
    }\n`;
    if (options.output === undefined) {
      await Deno.stdout.write(new TextEncoder().encode(text));
    } else {
      writeFileAtomic(options.output, text);
      console.error(
        `Input data for ${model.name} (${model.inputs.length} inputs) written to ${options.output}`,
      );
    }
    return "ok";
  } finally {
    await client.close();
  }
}
