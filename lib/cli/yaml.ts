/**
 * YAML configuration files (--config): every option of the table under its
 * long name, written with Model Analyzer's placeholders. The result is the
 * same RawOptions map the command line gives, so one validation serves both;
 * here only the shape of each value is checked, so that errors can name the
 * line.
 */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { RawOptions, RawValue } from "./options.ts";
import { UsageError } from "../types/errors.ts";
import { type Command, type OptionDef, OPTIONS, PROFILE_COMMANDS } from "./options.ts";

/** Options that only make sense typed by hand. */
const COMMAND_LINE_ONLY = new Set(["config", "help", "version"]);

/** Comma-delimited integers, or START:END[:STEP] when `range`. */
const INT_LIST = /^\s*\d+\s*(,\s*\d+\s*)*$/;
const INT_RANGE = /^\s*\d+\s*:\s*\d+\s*(:\s*\d+\s*)?$/;

/** The placeholders (seed 003) an option accepts in YAML, for error messages and docs. */
export function placeholders(def: OptionDef): string[] {
  const sweepList = def.sweep ? ["<list>", "<comma-delimited-list>"] : [];
  const sweepRange = def.sweep === "range" ? ["<range>"] : [];
  switch (def.type) {
    case "boolean":
      return ["<boolean>"];
    case "count":
      return ["<int>", "<boolean>"];
    case "int":
      return ["<int>", ...sweepList, ...sweepRange];
    case "float":
      return ["<number>"];
    case "string":
      return ["<string>", ...sweepList];
    case "range":
      return ["<string>", "<int>", "<range>", ...sweepList];
    case "list":
      return ["<list>", "<string>"];
    case "comma-list":
      return ["<comma-delimited-list>", "<list>"];
    case "dict":
      return ["<dict>"];
  }
}

function orList(items: string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

type Scalar = string | number | boolean | null;

/** Converts one option's YAML value, recording shape errors with their line. */
class Converter {
  readonly errors: string[] = [];
  constructor(private readonly file: string, private readonly lines: LineCounter) {}

  at(node: Node | null | undefined): string {
    return `${this.file} line ${this.lines.linePos(node?.range?.[0] ?? 0).line}`;
  }

  convert(def: OptionDef, value: Node | null, key: Node): RawValue | undefined {
    const wrong = (node: Node | null = value): undefined => {
      this.errors.push(
        `Invalid value for "${def.name}" at ${this.at(node ?? key)}: expected ${
          orList(placeholders(def))
        }`,
      );
      return undefined;
    };
    if (isScalar(value)) return this.#scalar(def, value.value as Scalar, value) ?? wrong();
    if (isSeq(value)) {
      if (def.structured && value.items.some((item) => isMap(item))) {
        return [JSON.stringify(value.toJSON())];
      }
      // A list of keys is a dict of weight 1 each, as Model Analyzer's `objectives: [perf_throughput]`.
      const many = def.type === "list" || def.type === "comma-list" || def.type === "dict" ||
        def.sweep !== undefined;
      if (!many || value.items.length === 0) return wrong();
      const items: string[] = [];
      for (const item of value.items as Array<Node | null>) {
        const v = isScalar(item) ? item.value as Scalar : undefined;
        const ok = def.type === "int"
          ? Number.isInteger(v)
          : typeof v === "string" || typeof v === "number";
        if (!ok) return wrong(item);
        if (!this.#choice(def, String(v), item!)) return undefined;
        items.push(String(v));
      }
      return def.type === "list" || def.type === "comma-list" || def.type === "dict"
        ? items
        : items.join(",");
    }
    if (isMap(value) && (def.type === "range" || def.sweep === "range")) {
      return this.#range(def, value.items, wrong);
    }
    if (isMap(value) && def.structured) return [JSON.stringify(value.toJSON())];
    if (isMap(value) && def.type === "dict") {
      const entries: string[] = [];
      for (const pair of value.items) {
        const k = isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof k === "string" && isMap(pair.value)) {
          // Model Analyzer's bounds: `perf_latency_p99: {max: 20}` is max-perf_latency_p99=20.
          for (const bound of pair.value.items) {
            const b = isScalar(bound.key) ? bound.key.value : undefined;
            const n = isScalar(bound.value) ? bound.value.value : undefined;
            if ((b !== "min" && b !== "max") || typeof n !== "number") {
              return wrong((bound.value ?? bound.key) as Node);
            }
            entries.push(`${b}-${k}=${n}`);
          }
          continue;
        }
        const v = isScalar(pair.value) ? pair.value.value as Scalar : undefined;
        if (typeof k !== "string" || v === null || v === undefined) {
          return wrong((pair.value ?? pair.key) as Node);
        }
        entries.push(`${k}=${v}`);
      }
      return entries;
    }
    return wrong();
  }

  #scalar(def: OptionDef, v: Scalar, node: Node): RawValue | undefined {
    switch (def.type) {
      case "boolean":
        return typeof v === "boolean" ? v : undefined;
      case "count":
        if (typeof v === "boolean") return v ? 1 : 0;
        return Number.isInteger(v) && (v as number) >= 0 ? v as number : undefined;
      case "int":
        if (Number.isInteger(v)) return v as number;
        if (typeof v !== "string" || !def.sweep) return undefined;
        return INT_LIST.test(v) || (def.sweep === "range" && INT_RANGE.test(v)) ? v : undefined;
      case "float":
        return typeof v === "number" ? v : undefined;
      case "string":
      case "range": {
        if (typeof v !== "string" && typeof v !== "number") return undefined;
        const text = String(v);
        const values = def.sweep ? text.split(",").map((s) => s.trim()) : [text];
        return values.every((item) => this.#choice(def, item, node)) ? text : undefined;
      }
      case "list":
      case "comma-list":
        return typeof v === "string" || typeof v === "number" ? [String(v)] : undefined;
      case "dict":
        return undefined;
    }
  }

  /** True when `text` is allowed; otherwise records the error (and the caller gives up). */
  #choice(def: OptionDef, text: string, node: Node): boolean {
    if (!def.choices || def.choices.includes(def.ignoreCase ? text.toLowerCase() : text)) {
      return true;
    }
    this.errors.push(
      `Invalid value "${text}" for "${def.name}" at ${this.at(node)}: expected one of ${
        def.choices.join(", ")
      }`,
    );
    return false;
  }

  /** A <range> mapping: start and stop, step 1 unless given. */
  #range(
    def: OptionDef,
    pairs: Array<{ key: unknown; value: unknown }>,
    wrong: (node?: Node | null) => undefined,
  ): string | undefined {
    const bounds = new Map<string, number>();
    for (const pair of pairs) {
      const key = pair.key as Node;
      const k = isScalar(key) ? key.value : undefined;
      const node = pair.value as Node | null;
      const v = isScalar(node) ? node.value : undefined;
      if (k !== "start" && k !== "stop" && k !== "step") {
        this.errors.push(
          `Unknown key "${String(k)}" in the <range> of "${def.name}" at ${
            this.at(key)
          }: expected start, stop and optionally step`,
        );
        return undefined;
      }
      const ok = def.type === "int" ? Number.isInteger(v) : typeof v === "number";
      if (!ok) return wrong(node);
      bounds.set(k, v as number);
    }
    const start = bounds.get("start");
    const stop = bounds.get("stop");
    if (start === undefined || stop === undefined) return wrong();
    return `${start}:${stop}:${bounds.get("step") ?? 1}`;
  }
}

/** The option a mistyped key probably meant: snake_case spellings and short names. */
function suggestion(key: string): string {
  const kebab = key.replaceAll("_", "-").toLowerCase();
  const def = OPTIONS.find((o) => o.name === kebab || o.short === key);
  return def ? `; did you mean "${def.name}"?` : "";
}

/** Parses a --config document into raw options for `command`; throws UsageError. */
export function parseConfigYaml(
  text: string,
  options: { file: string; command: Command },
): RawOptions {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const converter = new Converter(options.file, lines);
  const errors = converter.errors;
  for (const e of doc.errors) {
    errors.push(
      `Invalid YAML at ${options.file} line ${lines.linePos(e.pos[0]).line}: ${e.message}`,
    );
  }
  if (errors.length > 0) throw new UsageError(errors);
  const raw: RawOptions = new Map();
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return raw;
  if (!isMap(root)) {
    throw new UsageError([
      `Invalid config file ${options.file}: expected option names with their values (a <dict>)`,
    ]);
  }
  for (const pair of root.items) {
    const key = pair.key as Node;
    const name = isScalar(key) ? String(key.value) : "";
    // Model Analyzer spells options in snake_case.
    const def = OPTIONS.find((o) => o.name === name || o.name === name.replaceAll("_", "-"));
    const where = converter.at(key);
    if (!def) {
      errors.push(`Unknown key "${name}" at ${where}${suggestion(name)}`);
    } else if (COMMAND_LINE_ONLY.has(name)) {
      errors.push(`Key "${name}" at ${where} can only be given on the command line`);
    } else if (!(def.commands ?? PROFILE_COMMANDS).includes(options.command)) {
      errors.push(`Key "${name}" at ${where} does not apply to "inferperf ${options.command}"`);
    } else {
      const value = converter.convert(def, pair.value as Node | null, key);
      if (value !== undefined) raw.set(def.name, value);
    }
  }
  if (errors.length > 0) throw new UsageError(errors);
  return raw;
}

/** Reads and parses a --config file. */
export async function readConfigFile(
  path: string,
  options: { command: Command },
): Promise<RawOptions> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError([`Can not read the config file "${path}": ${(e as Error).message}`]);
  }
  return parseConfigYaml(text, { file: path, command: options.command });
}
