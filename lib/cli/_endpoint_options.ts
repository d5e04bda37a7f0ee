/**
 * --service-kind openai's API: --endpoint-type and --endpoint (each found
 * from the other where it can be), --extra-inputs (sampling parameters, and
 * the template endpoint's body and answer paths) and several -u servers.
 */
import { endpointDef, type EndpointType, endpointTypeOf, pathFor } from "../input/llm_endpoints.ts";
import { checkTemplate, compilePath } from "../input/llm_template.ts";
import type { TemplateFields } from "../protocol/plan.ts";
import type { Reader } from "./_reader.ts";

const KNOWN_PATHS = "v1/chat/completions, v1/completions, v1/embeddings, v1/ranking, rerank, " +
  "v1/responses, v1/messages, generate, generate_stream, v2/models/MODEL/generate[_stream]";

/** The API and its path; the path is streaming's twin where the API streams by path (TGI). */
export function parseEndpoint(
  r: Reader,
  options: { model: string; streaming: boolean },
): { endpoint: string; endpointType: EndpointType } {
  const given = (r.string("endpoint") ?? "").replace(/^\/+/, "");
  const named = r.string("endpoint-type") as EndpointType | undefined;
  const endpointType = named ?? endpointTypeOf(given);
  if (endpointType === undefined) {
    r.errors.push(
      r.has("endpoint")
        ? `Invalid value "${given}" for --endpoint: expected ${KNOWN_PATHS}, or name its API ` +
          "with --endpoint-type (template for any JSON API)"
        : `--service-kind openai needs --endpoint-type or --endpoint (${KNOWN_PATHS})`,
    );
    return { endpoint: given, endpointType: "chat" };
  }
  const path = given !== ""
    ? given
    : endpointDef(endpointType).path.replace("MODEL", options.model);
  if (path === "") {
    r.errors.push(`--endpoint-type ${endpointType} needs --endpoint PATH (the API's path)`);
  }
  return {
    endpoint: pathFor(endpointType, { path, streaming: options.streaming }),
    endpointType,
  };
}

/**
 * -u A,B or -u A -u B: AIPerf's several servers (--service-kind openai), each
 * new connection to the next in turn; [] without -u.
 */
export function parseUrls(r: Reader, kind: string): string[] {
  const urls = r.list("url").flatMap((u) => u.split(",")).map((u) => u.trim()).filter((u) => u);
  if (urls.length > 1 && kind !== "openai") {
    r.errors.push(
      `Several servers in -u (${urls.join(", ")}) need --service-kind openai (round robin)`,
    );
  }
  return urls;
}

/** Keys of --extra-inputs that configure the template endpoint instead of going in the body. */
const TEMPLATE_KEYS = {
  payload_template: "",
  response_field: "text",
  response_tokens_field: "tokens",
  response_prompt_tokens_field: "promptTokens",
} as const;

/** A value as genai-perf types it: a number, true/false or JSON, else the string. */
function typed(text: string): unknown {
  if (/^(true|false|null)$/.test(text) || /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) {
    return JSON.parse(text);
  }
  if (/^[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export interface ExtraInputs {
  extraInputs?: Record<string, unknown>;
  payloadTemplate?: string;
  templateFields?: TemplateFields;
}

/** --extra-inputs NAME:VALUE (or a JSON object), and the template endpoint's keys among them. */
export function parseExtraInputs(r: Reader, type: EndpointType): ExtraInputs {
  const extra: Record<string, unknown> = {};
  for (const item of r.list("extra-inputs")) {
    if (item.trim().startsWith("{")) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(item);
      } catch (error) {
        r.errors.push(`Invalid JSON for --extra-inputs: ${(error as Error).message}`);
        continue;
      }
      Object.assign(extra, parsed);
      continue;
    }
    const colon = item.indexOf(":");
    if (colon <= 0) {
      r.errors.push(`Invalid value "${item}" for --extra-inputs: expected NAME:VALUE`);
      continue;
    }
    const name = item.slice(0, colon).trim();
    const value = item.slice(colon + 1);
    extra[name] = name in TEMPLATE_KEYS ? value : typed(value.trim());
  }
  const template = type === "template";
  const fields: TemplateFields = {};
  let payloadTemplate: string | undefined;
  for (const [key, field] of Object.entries(TEMPLATE_KEYS)) {
    if (!(key in extra)) continue;
    const value = String(extra[key]);
    delete extra[key];
    if (!template) {
      r.errors.push(`--extra-inputs ${key} applies to --endpoint-type template only`);
    } else if (field === "") payloadTemplate = value;
    else {
      try {
        compilePath(value);
        fields[field] = value;
      } catch (error) {
        r.errors.push(`--extra-inputs ${key}: ${(error as Error).message}`);
      }
    }
  }
  if (template) {
    if (payloadTemplate === undefined) {
      r.errors.push(
        "--endpoint-type template needs --extra-inputs payload_template:'{...}' (the request " +
          'body, e.g. {"prompt": {{ text }}, "n_predict": {{ max_tokens }}})',
      );
    } else {
      const problem = checkTemplate(payloadTemplate, extra);
      if (problem !== undefined) r.errors.push(problem);
    }
  }
  return {
    ...(Object.keys(extra).length > 0 ? { extraInputs: extra } : {}),
    ...(payloadTemplate === undefined ? {} : { payloadTemplate }),
    ...(template ? { templateFields: fields } : {}),
  };
}
