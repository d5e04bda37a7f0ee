/**
 * perf_analyzer's directory input data (`--input-data DIR`): one file per
 * input, named after the input, holding the batch-1 tensor as raw row-major
 * little-endian bytes (BYTES inputs: a text file, one string per line).
 * Files named after outputs are optional validation data in the same form.
 * The directory is one step, so `-b N` repeats it N times.
 */
import type { Tensor, TensorSpec } from "../types/tensor.ts";
import { encodeBytesElements } from "./codec.ts";
import {
  type DataSet,
  type LoadOptions,
  locate,
  missingTensor,
  readDataFile,
  sizedTensor,
} from "./data_set.ts";
import { InputError } from "./errors.ts";

const utf8 = new TextDecoder();

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/** The tensor of one file; BYTES files hold one element per line, as perf_analyzer reads them. */
function fileTensor(
  spec: TensorSpec,
  bytes: Uint8Array,
  options: { role: "input" | "output"; option?: readonly number[] },
): Tensor {
  if (spec.datatype !== "BYTES") {
    return sizedTensor(spec, bytes, { ...options, flexible: options.role === "output" });
  }
  const lines = utf8.decode(bytes).split("\n");
  if (lines.at(-1) === "") lines.pop();
  return sizedTensor(spec, encodeBytesElements(lines), {
    ...options,
    elements: lines.length,
    flexible: options.role === "output",
  });
}

/** Loads a data directory as one step; every file must be named after an input or output. */
export async function loadDirectoryData(dir: string, options: LoadOptions): Promise<DataSet> {
  const { model } = options;
  const files = new Set<string>();
  for await (const entry of Deno.readDir(dir)) {
    const known = model.inputs.some((s) => s.name === entry.name) ||
      model.outputs.some((s) => s.name === entry.name);
    if (!known || !entry.isFile) {
      throw new InputError(
        `"${join(dir, entry.name)}": Provided data file '${entry.name}' does not correspond to ` +
          `a valid model input or output (inputs: ${model.inputs.map((s) => s.name).join(", ")}; ` +
          `outputs: ${model.outputs.map((s) => s.name).join(", ")})`,
      );
    }
    files.add(entry.name);
  }
  const where = `directory "${dir}"`;
  const inputs: Tensor[] = [];
  for (const spec of model.inputs) {
    const path = join(dir, spec.name);
    if (!files.has(spec.name)) {
      const filled = locate(`"${path}"`, () => options.fill?.(spec));
      if (filled === undefined && spec.optional) continue;
      if (filled === undefined) {
        const form = spec.datatype === "BYTES" ? "one string per line" : "raw bytes";
        throw new InputError(`${where}: ${missingTensor(spec)}: no file "${path}" (${form})`);
      }
      inputs.push(filled);
      continue;
    }
    const bytes = await readDataFile(path);
    const option = options.shapes.get(spec.name);
    inputs.push(locate(`"${path}"`, () => fileTensor(spec, bytes, { role: "input", option })));
  }
  const outputs: Tensor[] = [];
  for (const spec of model.outputs) {
    if (!files.has(spec.name)) continue;
    const path = join(dir, spec.name);
    const bytes = await readDataFile(path);
    outputs.push(locate(`"${path}"`, () => fileTensor(spec, bytes, { role: "output" })));
  }
  return { streams: [[{ inputs, outputs, where }]] };
}
