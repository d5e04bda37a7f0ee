/** Typed reads of raw option values, with the table's defaults and choices. */
import { parseRange, type Range } from "../load/range.ts";
import { optionDef, optionLabel, type RawOptions } from "./options.ts";

const DECIMAL = /^\s*[+-]?\d+\.\d*\s*$/;

/** Reads option values with their table default, recording conversion errors. */
export class Reader {
  readonly errors: string[] = [];
  /** Values taken as perf_analyzer takes them, with its warning. */
  readonly warnings: string[] = [];
  constructor(private readonly raw: RawOptions) {}

  /** What perf_analyzer accepts and ignores (`what` says why it has no effect): a warning. */
  ignored(what: string): void {
    this.warnings.push(`${what}: ignored, as perf_analyzer ignores it`);
  }

  has(name: string): boolean {
    return this.raw.has(name);
  }

  string(name: string): string | undefined {
    const def = optionDef(name);
    const value = this.raw.get(name) ?? def.default;
    if (value === undefined) return undefined;
    const text = def.ignoreCase ? String(value).toLowerCase() : String(value);
    this.#choice(name, text);
    return text;
  }

  number(name: string): number | undefined {
    const def = optionDef(name);
    const value = this.raw.get(name) ?? def.default;
    if (value === undefined) return undefined;
    const text = String(value);
    // perf_analyzer reads integers with std::stoi, which stops at a decimal point ("29.5" is 29).
    const n = typeof value === "number"
      ? value
      : def.type === "int" && DECIMAL.test(text)
      ? Math.trunc(Number(text))
      : Number(text.trim());
    if (text.trim() === "" || !Number.isFinite(n) || (def.type === "int" && !Number.isInteger(n))) {
      const kind = def.type === "int" ? "an integer" : "a number";
      this.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: expected ${kind}`);
      return undefined;
    }
    return n;
  }

  /** A number that must satisfy `ok`; the message says what is allowed. */
  bounded(name: string, ok: (n: number) => boolean, expected: string): number {
    const n = this.number(name);
    if (n !== undefined && !ok(n)) {
      this.errors.push(`Invalid value "${n}" for ${optionLabel(name)}: expected ${expected}`);
    }
    return n ?? 0;
  }

  flag(name: string): boolean {
    const value = this.raw.get(name);
    if (typeof value === "string") return value === "true" || value === "1";
    return value === true || (typeof value === "number" && value > 0);
  }

  count(name: string): number {
    const value = this.raw.get(name);
    return typeof value === "number" ? value : value === true ? 1 : 0;
  }

  list(name: string): string[] {
    const value = this.raw.get(name);
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [String(value)];
    for (const item of list) this.#choice(name, item);
    return list;
  }

  range(name: string, fallback: string, options = { integer: true }): Range {
    const text = String(this.raw.get(name) ?? fallback);
    try {
      return parseRange(text, options);
    } catch (e) {
      this.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: ${(e as Error).message}`);
      return { start: 1, end: 1, step: 1 };
    }
  }

  /** Records an error when the option has choices and `text` is not one of them. */
  #choice(name: string, text: string): void {
    const choices = optionDef(name).choices;
    if (choices && !choices.includes(text)) {
      this.errors.push(
        `Invalid value "${text}" for ${optionLabel(name)}: expected one of ${choices.join(", ")}`,
      );
    }
  }
}
