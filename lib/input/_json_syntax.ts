/**
 * A JSON reader for data files: JSON.parse where it suffices, and a scanner
 * for what it does not do. JSON.parse sometimes reports no position (and
 * then quotes the whole text), keeps no integer beyond 2^53 exact, and
 * rejects the NaN and Infinity literals perf_analyzer's reader accepts.
 */
import { parseJsonExact } from "./codec.ts";

export class JsonSyntaxError extends SyntaxError {
  override name = "JsonSyntaxError";
  constructor(message: string, readonly line: number, readonly column: number) {
    super(message);
  }
}

class ScanError {
  constructor(readonly offset: number, readonly reason: string) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;
const SPECIALS = ["NaN", "Infinity", "-Infinity", "Inf", "-Inf"];
const ESCAPES = '"\\/bfnrtu';

/** Walks JSON text; records the NaN/Infinity literals it meets, throws a ScanError at the first fault. */
class Scanner {
  #i = 0;
  readonly specials: Array<[number, number]> = [];
  constructor(readonly text: string) {}

  document(): void {
    this.#value();
    this.#space();
    if (this.#i < this.text.length) this.#fail("unexpected text after the JSON value");
  }

  #fail(reason: string): never {
    throw new ScanError(this.#i, reason);
  }

  #space(): void {
    const t = this.text;
    while (this.#i < t.length && " \t\n\r".includes(t[this.#i])) this.#i++;
  }

  #value(): void {
    this.#space();
    const t = this.text;
    const c = t[this.#i];
    if (c === undefined) this.#fail("unexpected end of input");
    if (c === "{") return this.#object();
    if (c === "[") return this.#array();
    if (c === '"') return this.#string();
    for (const word of ["true", "false", "null"]) {
      if (t.startsWith(word, this.#i)) {
        this.#i += word.length;
        return;
      }
    }
    const special = SPECIALS.find((s) => t.startsWith(s, this.#i));
    if (special !== undefined) {
      this.specials.push([this.#i, this.#i + special.length]);
      this.#i += special.length;
      return;
    }
    NUMBER.lastIndex = this.#i;
    if (!NUMBER.test(t)) this.#fail(`unexpected character ${JSON.stringify(c)}`);
    this.#i = NUMBER.lastIndex;
  }

  #object(): void {
    this.#i++;
    this.#space();
    if (this.text[this.#i] === "}") {
      this.#i++;
      return;
    }
    for (;;) {
      this.#space();
      if (this.text[this.#i] !== '"') this.#fail("expected a double-quoted property name");
      this.#string();
      this.#space();
      if (this.text[this.#i] !== ":") this.#fail("expected ':' after a property name");
      this.#i++;
      this.#value();
      this.#space();
      const c = this.text[this.#i];
      this.#i++;
      if (c === "}") return;
      if (c !== ",") this.#back("expected ',' or '}' after a property value");
    }
  }

  #array(): void {
    this.#i++;
    this.#space();
    if (this.text[this.#i] === "]") {
      this.#i++;
      return;
    }
    for (;;) {
      this.#value();
      this.#space();
      const c = this.text[this.#i];
      this.#i++;
      if (c === "]") return;
      if (c !== ",") this.#back("expected ',' or ']' after an array element");
    }
  }

  #back(reason: string): never {
    this.#i--;
    this.#fail(reason);
  }

  #string(): void {
    const t = this.text;
    this.#i++;
    for (;;) {
      const c = t[this.#i];
      if (c === undefined) this.#fail("unterminated string");
      if (c === '"') {
        this.#i++;
        return;
      }
      if (c < " ") this.#fail("control character in a string");
      if (c !== "\\") {
        this.#i++;
        continue;
      }
      const escape = t[this.#i + 1];
      if (escape === undefined || !ESCAPES.includes(escape)) this.#fail("invalid escape");
      HEX4.lastIndex = this.#i + 2;
      if (escape === "u" && !HEX4.test(t)) this.#fail("invalid \\u escape");
      this.#i += escape === "u" ? 6 : 2;
    }
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Parses JSON text. Integers beyond 2^53 become bigints; NaN and Infinity
 * literals become the strings "NaN", "Infinity" and "-Infinity", which the
 * tensor codec reads as floats. Throws a JsonSyntaxError with the line and
 * column of the first fault.
 */
export function parseDataJson(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
  const scanner = new Scanner(text);
  try {
    scanner.document();
  } catch (error) {
    if (!(error instanceof ScanError)) throw error;
    const { line, column } = lineAndColumn(text, error.offset);
    throw new JsonSyntaxError(error.reason, line, column);
  }
  let quoted = "";
  let last = 0;
  for (const [start, end] of scanner.specials) {
    const literal = text.slice(start, end).replace(/Inf$/, "Infinity");
    quoted += `${text.slice(last, start)}"${literal}"`;
    last = end;
  }
  return parseJsonExact(quoted + text.slice(last));
}
