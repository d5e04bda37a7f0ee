/**
 * Triton's model configuration (config.pbtxt) in protobuf text format: a
 * reader and a writer driven by the ModelConfig descriptor generated from
 * proto/model_config.proto, so the message is the same one the gRPC client
 * decodes. A configuration is plain data in protobuf's JSON form (field names
 * in snake_case, enums by name, maps as objects), which is also what Triton's
 * repository API takes as a `config` override.
 *
 * proto/model_config.proto is a subset of Triton's: a field it lacks is kept
 * as it was read (numbers, booleans, strings, nested messages) and written
 * back, so a variant of a real configuration loses nothing.
 */
import protobuf from "protobufjs/light.js";
import { MODEL_CONFIG_TYPE } from "./grpc/messages.ts";

/** A field's value in JSON form. */
export type ConfigValue = string | number | boolean | ConfigMessage | ConfigValue[];
/** A message; an undefined field is absent (so that typed fields can be optional). */
export interface ConfigMessage {
  [field: string]: ConfigValue | undefined;
}

/** The fields inferperf reads or changes; the rest pass through untouched. */
export interface ModelConfig extends ConfigMessage {
  name?: string;
  backend?: string;
  platform?: string;
  max_batch_size?: number;
  instance_group?: ConfigMessage[];
  dynamic_batching?: ConfigMessage;
  sequence_batching?: ConfigMessage;
  ensemble_scheduling?: ConfigMessage;
  parameters?: Record<string, ConfigMessage>;
}

/** A config.pbtxt that does not parse: where (file:line:column) and why. */
export class ConfigSyntaxError extends Error {
  constructor(
    readonly why: string,
    readonly where: { file: string; line: number; column: number },
  ) {
    super(`${where.file}:${where.line}:${where.column}: ${why}`);
    this.name = "ConfigSyntaxError";
  }
}

type TokenKind = "ident" | "number" | "string" | "punct" | "end";
interface Token {
  kind: TokenKind;
  text: string;
  /** The decoded value of a string token. */
  value?: string;
  line: number;
  column: number;
}

const PUNCTUATION = new Set(["{", "}", "<", ">", "[", "]", ":", ",", ";"]);
const IDENT = /[A-Za-z_][A-Za-z0-9_.]*/y;
const NUMBER = /-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[fF]?/y;
const NEGATIVE_IDENT = /-[A-Za-z_][A-Za-z0-9_]*/y;
const SIMPLE_ESCAPES: Record<string, number> = {
  n: 10,
  t: 9,
  r: 13,
  a: 7,
  b: 8,
  f: 12,
  v: 11,
  "\\": 92,
  "'": 39,
  '"': 34,
  "?": 63,
};

class Lexer {
  #pos = 0;
  #line = 1;
  #lineStart = 0;
  #peeked?: Token;
  readonly #encoder = new TextEncoder();

  constructor(private readonly text: string, private readonly file: string) {}

  fail(why: string, at: { line: number; column: number }): never {
    throw new ConfigSyntaxError(why, { file: this.file, ...at });
  }

  peek(): Token {
    return this.#peeked ??= this.#read();
  }

  next(): Token {
    const token = this.peek();
    this.#peeked = undefined;
    return token;
  }

  #skipSpace(): void {
    const text = this.text;
    while (this.#pos < text.length) {
      const c = text[this.#pos]!;
      if (c === "\n") {
        this.#pos++;
        this.#line++;
        this.#lineStart = this.#pos;
      } else if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v") this.#pos++;
      else if (c === "#") {
        while (this.#pos < text.length && text[this.#pos] !== "\n") this.#pos++;
      } else break;
    }
  }

  #read(): Token {
    this.#skipSpace();
    const at = { line: this.#line, column: this.#pos - this.#lineStart + 1 };
    const text = this.text;
    if (this.#pos >= text.length) return { kind: "end", text: "end of file", ...at };
    const c = text[this.#pos]!;
    if (PUNCTUATION.has(c)) {
      this.#pos++;
      return { kind: "punct", text: c, ...at };
    }
    if (c === '"' || c === "'") return { kind: "string", ...this.#string(c, at), ...at };
    for (
      const [pattern, kind] of [[NUMBER, "number"], [NEGATIVE_IDENT, "ident"], [
        IDENT,
        "ident",
      ]] as const
    ) {
      pattern.lastIndex = this.#pos;
      const match = pattern.exec(text);
      if (match) {
        this.#pos += match[0].length;
        return { kind, text: match[0], ...at };
      }
    }
    this.fail(`Unexpected character "${c}"`, at);
  }

  /** A quoted string with C escapes; octal and hex escapes are bytes of UTF-8. */
  #string(quote: string, at: { line: number; column: number }): { text: string; value: string } {
    const text = this.text;
    const start = this.#pos++;
    const bytes: number[] = [];
    while (true) {
      const code = text.codePointAt(this.#pos);
      const c = code === undefined ? undefined : String.fromCodePoint(code);
      if (c === undefined || c === "\n") this.fail("Unterminated string", at);
      this.#pos += c.length;
      if (c === quote) break;
      if (c !== "\\") {
        bytes.push(...this.#encoder.encode(c));
        continue;
      }
      const e = text[this.#pos++] ?? "";
      if (e in SIMPLE_ESCAPES) bytes.push(SIMPLE_ESCAPES[e]!);
      else if (/[0-7]/.test(e)) {
        const digits = /^[0-7]{1,3}/.exec(text.slice(this.#pos - 1, this.#pos + 2))![0];
        this.#pos += digits.length - 1;
        bytes.push(parseInt(digits, 8) & 0xff);
      } else if (e === "x" && /[0-9a-fA-F]/.test(text[this.#pos] ?? "")) {
        const digits = /^[0-9a-fA-F]{1,2}/.exec(text.slice(this.#pos, this.#pos + 2))![0];
        this.#pos += digits.length;
        bytes.push(parseInt(digits, 16));
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(this.#pos, this.#pos + 4))) {
        bytes.push(
          ...this.#encoder.encode(
            String.fromCharCode(parseInt(text.slice(this.#pos, this.#pos + 4), 16)),
          ),
        );
        this.#pos += 4;
      } else {
        this.fail(`Invalid escape "\\${e}" in string`, {
          line: this.#line,
          column: this.#pos - 1 - this.#lineStart,
        });
      }
    }
    return {
      text: text.slice(start, this.#pos),
      value: new TextDecoder().decode(new Uint8Array(bytes)),
    };
  }
}

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sint64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sfixed64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  fixed64: [0, Number.MAX_SAFE_INTEGER],
};

/** The declared field `name` of `type` (never an Object.prototype member such as "valueOf"). */
function fieldOf(type: protobuf.Type | null, name: string): protobuf.Field | undefined {
  return type && Object.hasOwn(type.fields, name) ? type.fields[name] : undefined;
}

function resolved(field: protobuf.Field): protobuf.Type | protobuf.Enum | null {
  field.resolve();
  return field.resolvedType as protobuf.Type | protobuf.Enum | null;
}

function isMessageType(t: unknown): t is protobuf.Type {
  return t !== null && typeof t === "object" && "fields" in t;
}

function isEnumType(t: unknown): t is protobuf.Enum {
  return t !== null && typeof t === "object" && "values" in t && !("fields" in t);
}

class Parser {
  constructor(private readonly lexer: Lexer) {}

  message(type: protobuf.Type | null, end: string): ConfigMessage {
    const lexer = this.lexer;
    const message: ConfigMessage = {};
    const seen = new Set<string>();
    while (true) {
      const token = lexer.peek();
      if (token.kind === "end" ? end === "" : token.text === end && token.kind === "punct") {
        if (end !== "") lexer.next();
        break;
      }
      if (token.kind === "end") lexer.fail(`Expected "${end}" before the end of the file`, token);
      lexer.next();
      if (token.kind !== "ident") lexer.fail(`Expected a field name, found "${token.text}"`, token);
      // A field proto/ does not declare is kept as read (untyped).
      const field = fieldOf(type, token.text);
      this.#field(message, { name: token.text, field, token, seen, type });
      const separator = lexer.peek();
      if (separator.kind === "punct" && (separator.text === "," || separator.text === ";")) {
        lexer.next();
      }
    }
    return message;
  }

  #field(
    message: ConfigMessage,
    options: {
      name: string;
      field: protobuf.Field | undefined;
      token: Token;
      seen: Set<string>;
      type: protobuf.Type | null;
    },
  ): void {
    const { name, field, token, seen } = options;
    const lexer = this.lexer;
    const valueType = field ? resolved(field) : null;
    const isMessage = field ? isMessageType(valueType) || field.map : undefined;
    let colon = false;
    if (lexer.peek().kind === "punct" && lexer.peek().text === ":") {
      lexer.next();
      colon = true;
    }
    const next = lexer.peek();
    const opensMessage = next.kind === "punct" && (next.text === "{" || next.text === "<");
    const opensList = next.kind === "punct" && next.text === "[";
    if (!colon && !opensMessage && !(opensList && isMessage !== false)) {
      lexer.fail(`Expected ":" or "{" after field "${name}", found "${next.text}"`, next);
    }
    const repeated = field ? field.repeated || field.map : true;
    const values: ConfigValue[] = [];
    const one = () => values.push(this.#value({ name, field, valueType, isMessage }));
    if (opensList) {
      if (field && !repeated) {
        lexer.fail(`Field "${name}" is not repeated: a list is not allowed`, next);
      }
      lexer.next();
      if (!(lexer.peek().kind === "punct" && lexer.peek().text === "]")) {
        while (true) {
          one();
          const after = lexer.next();
          if (after.kind === "punct" && after.text === "]") break;
          if (!(after.kind === "punct" && after.text === ",")) {
            lexer.fail(
              `Expected "," or "]" in the list of "${name}", found "${after.text}"`,
              after,
            );
          }
        }
      } else lexer.next();
    } else one();

    if (field?.map) {
      if (!Object.hasOwn(message, name)) setField(message, name, {});
      const map = message[name] as ConfigMessage;
      for (const entry of values as ConfigMessage[]) {
        setField(
          map,
          String(entry.key ?? (keyType(field) === "string" ? "" : 0)),
          entry.value ?? (isMessageType(valueType) ? {} : defaultOf(field.type, valueType)),
        );
      }
    } else if (field?.repeated) {
      setField(message, name, [
        ...((Object.hasOwn(message, name) ? message[name] as ConfigValue[] : undefined) ?? []),
        ...values,
      ]);
    } else if (!field && (Object.hasOwn(message, name) || opensList)) {
      // An undeclared field given twice, or as a list, is repeated.
      const before = Object.hasOwn(message, name) ? message[name] : undefined;
      setField(
        message,
        name,
        before === undefined ? values : [...(Array.isArray(before) ? before : [before]), ...values],
      );
    } else {
      if (seen.has(name)) lexer.fail(`Field "${name}" is given more than once`, token);
      const oneof = field?.partOf;
      if (oneof) {
        const other = oneof.oneof.find((o) => o !== name && seen.has(o));
        if (other) {
          lexer.fail(
            `Field "${name}" and field "${other}" are both given, of oneof "${oneof.name}"`,
            token,
          );
        }
      }
      setField(message, name, values[0]!);
    }
    seen.add(name);
  }

  #value(
    options: {
      name: string;
      field: protobuf.Field | undefined;
      valueType: protobuf.Type | protobuf.Enum | null;
      isMessage: boolean | undefined;
    },
  ): ConfigValue {
    const lexer = this.lexer;
    const { name, field, valueType, isMessage } = options;
    const token = lexer.peek();
    const opens = token.kind === "punct" && (token.text === "{" || token.text === "<");
    if (isMessage === true || (isMessage === undefined && opens)) {
      if (!opens) {
        lexer.fail(`Expected "{" for message field "${name}", found "${token.text}"`, token);
      }
      lexer.next();
      const type = field?.map ? mapEntryType(field, valueType) : valueType as protobuf.Type | null;
      return this.message(type, token.text === "{" ? "}" : ">");
    }
    lexer.next();
    if (!field) return untyped(token, lexer);
    return scalar(token, { type: field.type, valueType, name, lexer });
  }
}

function keyType(field: protobuf.Field): string {
  return (field as unknown as protobuf.MapField).keyType;
}

/** Sets a field even when its name is "__proto__" (a map key or an undeclared field). */
function setField(message: ConfigMessage, name: string, value: ConfigValue): void {
  Object.defineProperty(message, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

const MAP_ENTRIES = new Map<protobuf.Field, protobuf.Type>();

/** A map field's entries, which the text format writes as messages of key and value. */
function mapEntryType(field: protobuf.Field, valueType: unknown): protobuf.Type {
  let entry = MAP_ENTRIES.get(field);
  if (!entry) {
    entry = new protobuf.Type(`${field.name}Entry`);
    entry.add(new protobuf.Field("key", 1, keyType(field)));
    const value = new protobuf.Field("value", 2, field.type);
    entry.add(value);
    value.resolvedType = valueType as protobuf.Type;
    value.resolved = true;
    MAP_ENTRIES.set(field, entry);
  }
  return entry;
}

function defaultOf(type: string, valueType: unknown): ConfigValue {
  if (type === "string" || type === "bytes") return "";
  if (type === "bool") return false;
  if (isEnumType(valueType)) return Object.keys(valueType.values)[0]!;
  return 0;
}

/** A value of a field proto/ does not declare: a string, number, boolean or enum name. */
function untyped(token: Token, lexer: Lexer): ConfigValue {
  if (token.kind === "string") return stringTokens(token, lexer);
  if (token.kind === "number") return parseNumber(token.text);
  if (token.kind === "ident") {
    if (token.text === "true" || token.text === "True") return true;
    if (token.text === "false" || token.text === "False") return false;
    return token.text;
  }
  lexer.fail(`Expected a value, found "${token.text}"`, token);
}

/** Adjacent strings are one ("a" "b" is "ab"). */
function stringTokens(first: Token, lexer: Lexer): string {
  let value = first.value!;
  while (lexer.peek().kind === "string") value += lexer.next().value!;
  return value;
}

function parseNumber(text: string): number {
  const body = text.replace(/[fF]$/, "").replace(/^(-?)0[xX]/, "$10x");
  if (/^-?0x/.test(body)) {
    return (body.startsWith("-") ? -1 : 1) * parseInt(body.replace("-", ""), 16);
  }
  return Number(body);
}

function scalar(
  token: Token,
  options: { type: string; valueType: unknown; name: string; lexer: Lexer },
): ConfigValue {
  const { type, valueType, name, lexer } = options;
  const wrong = (expected: string): never =>
    lexer.fail(`Expected ${expected} for field "${name}", found "${token.text}"`, token);
  if (type === "string" || type === "bytes") {
    return token.kind === "string" ? stringTokens(token, lexer) : wrong("a string");
  }
  if (type === "bool") {
    if (token.kind === "ident" && /^(true|True|t)$/.test(token.text)) return true;
    if (token.kind === "ident" && /^(false|False|f)$/.test(token.text)) return false;
    if (token.kind === "number" && (token.text === "0" || token.text === "1")) {
      return token.text === "1";
    }
    return wrong("true or false");
  }
  if (isEnumType(valueType)) {
    if (token.kind === "ident" && token.text in valueType.values) return token.text;
    if (token.kind === "number" && /^-?\d+$/.test(token.text)) {
      const name = valueType.valuesById[Number(token.text)];
      if (name !== undefined) return name;
    }
    return wrong(`one of ${Object.keys(valueType.values).join(", ")}`);
  }
  if (type === "float" || type === "double") {
    if (token.kind === "number") return parseNumber(token.text);
    const special = /^(-?)(inf|infinity|nan)$/i.exec(token.text);
    if (token.kind === "ident" && special) {
      return special[2]!.toLowerCase() === "nan" ? NaN : special[1] ? -Infinity : Infinity;
    }
    return wrong("a number");
  }
  const range = INT_RANGES[type];
  if (range) {
    const value = token.kind === "number" && !/[.eEfF]/.test(token.text.replace(/^-?0[xX].*/, "0"))
      ? parseNumber(token.text)
      : wrong("an integer");
    if (value < range[0] || value > range[1]) {
      lexer.fail(`Integer ${token.text} is out of range for field "${name}" (${type})`, token);
    }
    return value;
  }
  return wrong(`a ${type}`);
}

/**
 * Reads a config.pbtxt; throws ConfigSyntaxError naming `file`, the line and
 * the column of the first problem.
 */
export function parseModelConfig(text: string, file = "config.pbtxt"): ModelConfig {
  return new Parser(new Lexer(text, file)).message(MODEL_CONFIG_TYPE, "") as ModelConfig;
}

// ---------------------------------------------------------------------------
// The writer

function quote(value: string): string {
  let out = '"';
  for (const c of value) {
    const code = c.codePointAt(0)!;
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, "0")}`;
    else out += c;
  }
  return `${out}"`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  return Object.is(value, -0) ? "-0" : String(value);
}

/** Enum names are written bare; for a field proto/ lacks, an UPPER_SNAKE string is taken for one. */
const ENUM_LIKE = /^[A-Z][A-Z0-9_]*$/;

function formatScalar(value: ConfigValue, field: protobuf.Field | undefined): string {
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") return formatNumber(value);
  if (typeof value !== "string") throw new Error(`Expected a scalar, got ${JSON.stringify(value)}`);
  if (field) return isEnumType(resolved(field)) ? value : quote(value);
  return ENUM_LIKE.test(value) ? value : quote(value);
}

function isMessageValue(value: ConfigValue): value is ConfigMessage {
  return typeof value === "object" && !Array.isArray(value);
}

function writeMessage(
  message: ConfigMessage,
  options: { type: protobuf.Type | null; indent: string; lines: string[] },
): void {
  const { type, indent, lines } = options;
  for (const [name, value] of Object.entries(message)) {
    if (value === undefined) continue;
    const field = fieldOf(type, name);
    const valueType = field ? resolved(field) : null;
    const messageType = isMessageType(valueType) ? valueType : null;
    if (field?.map) {
      const entries = Object.entries(value as ConfigMessage).map(([key, v]) => ({
        key: keyType(field) === "string" ? key : Number(key),
        value: v,
      }));
      writeList(name, entries, { type: mapEntryType(field, valueType), indent, lines, field });
    } else if (Array.isArray(value)) {
      writeList(name, value, { type: messageType, indent, lines, field });
    } else if (isMessageValue(value)) {
      writeBlock(`${indent}${name} {`, value, { type: messageType, indent, lines });
    } else lines.push(`${indent}${name}: ${formatScalar(value, field)}`);
  }
}

function writeBlock(
  head: string,
  value: ConfigMessage,
  options: { type: protobuf.Type | null; indent: string; lines: string[]; close?: string },
): void {
  const { indent, lines } = options;
  if (Object.keys(value).length === 0) {
    lines.push(`${head} }${options.close ?? ""}`);
    return;
  }
  lines.push(head);
  writeMessage(value, { ...options, indent: `${indent}  ` });
  lines.push(`${indent}}${options.close ?? ""}`);
}

function writeList(
  name: string,
  values: readonly ConfigValue[],
  options: {
    type: protobuf.Type | null;
    indent: string;
    lines: string[];
    field: protobuf.Field | undefined;
  },
): void {
  const { indent, lines } = options;
  const messages = values.length > 0 && values.every(isMessageValue);
  if (!messages) {
    const items = values.map((v) => formatScalar(v, options.field));
    lines.push(`${indent}${name}: [ ${items.join(", ")}${items.length > 0 ? " " : ""}]`);
    return;
  }
  lines.push(`${indent}${name} [`);
  values.forEach((value, i) =>
    writeBlock(`${indent}  {`, value as ConfigMessage, {
      type: options.type,
      indent: `${indent}  `,
      lines,
      close: i < values.length - 1 ? "," : "",
    })
  );
  lines.push(`${indent}]`);
}

/** A configuration as config.pbtxt text, in the layout Triton's own examples use. */
export function formatModelConfig(config: ModelConfig): string {
  const lines: string[] = [];
  writeMessage(config, { type: MODEL_CONFIG_TYPE, indent: "", lines });
  return `${lines.join("\n")}\n`;
}
