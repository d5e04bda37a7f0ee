/**
 * The template endpoint's request bodies (--endpoint-type template,
 * `--extra-inputs payload_template:...`, AIPerf's option): a JSON body with
 * placeholders, `{{ text }}` or AIPerf's `{{ text|tojson }}` (every value goes
 * in as JSON either way), for the turn's text, its texts, the model, the
 * output length asked for, whether it streams, the role and every
 * --extra-inputs value by name. Rendered once per request before the run.
 */
import { InputError } from "./errors.ts";
import type { TurnBody } from "./llm_endpoints.ts";

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*tojson\s*)?\}\}/g;

/** The placeholders every template may use (besides the --extra-inputs names). */
export const TEMPLATE_VALUES = ["text", "texts", "model", "max_tokens", "stream", "role"] as const;

/** The placeholders of `template` that name nothing known: one message naming them, or undefined. */
export function checkTemplate(
  template: string,
  extra: Record<string, unknown>,
): string | undefined {
  const known = new Set<string>([...TEMPLATE_VALUES, ...Object.keys(extra)]);
  const unknown = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]).filter((n) => !known.has(n));
  if (unknown.length > 0) {
    return `payload_template of --extra-inputs: unknown placeholder ${
      [...new Set(unknown)].map((n) => `{{ ${n} }}`).join(", ")
    } (known: ${[...known].join(", ")})`;
  }
  const rendered = template.replace(PLACEHOLDER, "null");
  try {
    const body = JSON.parse(rendered);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return "payload_template of --extra-inputs must render a JSON object";
    }
  } catch (error) {
    return `payload_template of --extra-inputs does not render JSON: ${(error as Error).message}`;
  }
  return undefined;
}

/** The body of a turn from the template, its placeholders replaced by the values as JSON. */
export function renderTemplate(
  template: string,
  options: { turn: TurnBody; extra: Record<string, unknown> },
): Record<string, unknown> {
  const { turn, extra } = options;
  const values: Record<string, unknown> = {
    ...extra,
    text: turn.texts.join(" "),
    texts: turn.texts,
    model: turn.model,
    max_tokens: turn.maxTokens ?? null,
    stream: turn.streaming,
    role: turn.role ?? "user",
  };
  const text = template.replace(PLACEHOLDER, (_m, name: string) => JSON.stringify(values[name]));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `payload_template of --extra-inputs rendered invalid JSON: ${(error as Error).message}`,
    );
  }
}

/** A JSON path's steps: names and array indexes. */
export type JsonPath = ReadonlyArray<string | number>;

/**
 * A JMESPath of names and indexes (`choices[0].delta.content`) as its steps;
 * throws a RangeError naming it otherwise.
 */
export function compilePath(path: string): JsonPath {
  const steps: Array<string | number> = [];
  for (const part of path.split(".")) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (match === null || (match[1] === "" && match[2] === "")) {
      throw new RangeError(
        `Invalid JSON path "${path}": expected names and [N] indexes joined by dots`,
      );
    }
    if (match[1] !== "") steps.push(match[1]);
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}
