/**
 * A parser for Prometheus' text exposition format (version 0.0.4), the
 * format of Triton's /metrics endpoint. Comments (HELP, TYPE and others) are
 * skipped: only samples are returned.
 */

export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  /** May be NaN or +-Infinity. */
  value: number;
  /** Milliseconds since the epoch, when the exposition gives one. */
  timestampMs?: number;
}

/** A line that is not valid exposition text; `line` counts from 1. */
export class PrometheusSyntaxError extends SyntaxError {
  override name = "PrometheusSyntaxError";
  constructor(readonly line: number, readonly reason: string) {
    super(`Invalid Prometheus metrics text at line ${line}: ${reason}`);
  }
}

const NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const SPACE = /[ \t]*/y;
const TOKEN = /[^ \t]+/y;
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;
const SPECIAL: Record<string, number> = {
  "nan": NaN,
  "+inf": Infinity,
  "inf": Infinity,
  "-inf": -Infinity,
};
const ESCAPES: Record<string, string> = { "\\": "\\", '"': '"', "n": "\n" };

function parseValue(text: string): number | undefined {
  const special = SPECIAL[text.toLowerCase()];
  if (special !== undefined) return special;
  return FLOAT.test(text) ? Number(text) : undefined;
}

/** Reads one line left to right; `fail` throws with the line number. */
class LineReader {
  pos = 0;
  constructor(readonly text: string, readonly number: number) {}

  fail(reason: string): never {
    throw new PrometheusSyntaxError(this.number, reason);
  }

  match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.pos;
    const found = pattern.exec(this.text);
    if (!found) return undefined;
    this.pos = pattern.lastIndex;
    return found[0];
  }

  skipSpace(): void {
    this.match(SPACE);
  }

  peek(): string {
    return this.text[this.pos] ?? "";
  }

  expect(char: string, what: string): void {
    if (this.peek() !== char) this.fail(`expected ${what} at column ${this.pos + 1}`);
    this.pos++;
  }

  labelValue(): string {
    this.expect('"', "a quoted label value");
    let value = "";
    for (;;) {
      const char = this.text[this.pos++];
      if (char === undefined) this.fail("unterminated label value");
      if (char === '"') return value;
      if (char === "\\") {
        const escaped = ESCAPES[this.text[this.pos++] ?? ""];
        // The format defines three escapes; anything else is kept as written.
        value += escaped ?? `\\${this.text[this.pos - 1] ?? ""}`;
      } else value += char;
    }
  }

  labels(): Record<string, string> {
    const labels: Record<string, string> = {};
    this.expect("{", '"{"');
    for (;;) {
      this.skipSpace();
      if (this.peek() === "}") break;
      const name = this.match(LABEL_NAME) ?? this.fail(`expected a label name at ${this.pos + 1}`);
      this.skipSpace();
      this.expect("=", '"="');
      this.skipSpace();
      labels[name] = this.labelValue();
      this.skipSpace();
      if (this.peek() !== ",") break;
      this.pos++;
    }
    this.expect("}", '"}"');
    return labels;
  }
}

function parseSample(reader: LineReader): PrometheusSample {
  const name = reader.match(NAME) ?? reader.fail("expected a metric name");
  reader.skipSpace();
  const labels = reader.peek() === "{" ? reader.labels() : {};
  reader.skipSpace();
  const valueText = reader.match(TOKEN) ?? reader.fail(`missing value of "${name}"`);
  const value = parseValue(valueText) ?? reader.fail(`invalid value "${valueText}"`);
  reader.skipSpace();
  const sample: PrometheusSample = { name, labels, value };
  const timestamp = reader.match(TOKEN);
  if (timestamp !== undefined) {
    if (!/^-?\d+$/.test(timestamp)) reader.fail(`invalid timestamp "${timestamp}"`);
    sample.timestampMs = Number(timestamp);
    reader.skipSpace();
  }
  if (reader.pos < reader.text.length) reader.fail("unexpected text after the sample");
  return sample;
}

/** Every sample of an exposition, in order; throws PrometheusSyntaxError on a malformed line. */
export function parsePrometheusText(text: string): PrometheusSample[] {
  const samples: PrometheusSample[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith("\r") ? lines[i].slice(0, -1) : lines[i];
    const reader = new LineReader(line, i + 1);
    reader.skipSpace();
    if (reader.pos === line.length || reader.peek() === "#") continue;
    samples.push(parseSample(reader));
  }
  return samples;
}
