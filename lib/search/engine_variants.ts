/**
 * An engine search's variants: every combination of `engine_parameters`
 * that the parameter constraints allow, each a command line made from the
 * engine's template. The template is split into arguments once; a
 * placeholder (`{name}`) is replaced inside its argument and never splits
 * it, so no value is ever read by a shell.
 */
import { expand } from "./variants.ts";

export type ParameterValue = string | number | boolean;

export interface EngineVariant {
  /** `parallel=2,ctx_size=4096` (the parameters that vary), or `default`. */
  name: string;
  /** The model the points request (-m). */
  model: string;
  /** Every parameter's value, fixed ones too. */
  parameters: Record<string, ParameterValue>;
  /** The command with every placeholder but the built-ins (host, port) filled. */
  command: string[];
  env: Record<string, string>;
}

/** Placeholders inferperf fills itself at each start. */
export const BUILT_IN_PLACEHOLDERS = ["host", "port"] as const;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

/**
 * Splits a command template into arguments as a POSIX shell would split
 * words (single and double quotes, backslashes), without expanding
 * anything. Throws RangeError on an unclosed quote.
 */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) {
        word += text[++i];
      } else word += c;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      word ??= "";
      quote = c;
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text[++i];
    } else word = (word ?? "") + c;
  }
  if (quote !== undefined) throw new RangeError(`an unclosed ${quote} quote`);
  if (word !== undefined) words.push(word);
  return words;
}

/** The placeholders of `args`, in order of appearance. */
export function placeholdersOf(args: readonly string[]): string[] {
  const names = args.flatMap((a) => [...a.matchAll(PLACEHOLDER)].map((m) => m[1]!));
  return [...new Set(names)];
}

/** `args` with each `{name}` of `values` replaced inside its argument; others stay. */
export function fillPlaceholders(
  args: readonly string[],
  values: Readonly<Record<string, ParameterValue>>,
): string[] {
  return args.map((a) =>
    a.replace(PLACEHOLDER, (all, name: string) => name in values ? String(values[name]) : all)
  );
}

/** A command line as a POSIX shell reads it back: each argument quoted where it needs it. */
export function formatCommand(args: readonly string[]): string {
  return args.map((a) => /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)
    .join(" ");
}

type Node =
  | { kind: "number"; value: number }
  | { kind: "name"; name: string }
  | { kind: "op"; op: string; left: Node; right: Node };

const COMPARISONS = ["<=", ">=", "==", "!=", "<", ">"] as const;

/** A constraint between parameters: `ctx_size >= parallel * 512`. */
export interface ParameterConstraint {
  text: string;
  /** The parameters it reads. */
  names: string[];
  holds(values: Readonly<Record<string, ParameterValue>>): boolean;
}

/**
 * Parses `EXPR OP EXPR` with OP one of < <= > >= == != and EXPR numbers and
 * parameter names joined by + - * / and parentheses. Throws RangeError.
 */
export function parseConstraint(text: string): ParameterConstraint {
  const tokens = text.match(/\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!=|[<>+\-*/()]|\S/g) ??
    [];
  let at = 0;
  const peek = () => tokens[at];
  const fail = (why: string): never => {
    throw new RangeError(why);
  };
  const factor = (): Node => {
    const t = tokens[at++];
    if (t === undefined) return fail("it ends early");
    if (t === "(") {
      const inner = sum();
      if (tokens[at++] !== ")") fail("a ( is not closed");
      return inner;
    }
    if (/^\d/.test(t)) return { kind: "number", value: Number(t) };
    if (/^[A-Za-z_]/.test(t)) return { kind: "name", name: t };
    return fail(`unexpected "${t}"`);
  };
  const chain = (next: () => Node, ops: string[]) => () => {
    let left = next();
    while (ops.includes(peek() ?? "")) {
      const op = tokens[at++]!;
      left = { kind: "op", op, left, right: next() };
    }
    return left;
  };
  const product = chain(factor, ["*", "/"]);
  const sum = chain(product, ["+", "-"]);
  const left = sum();
  const op = tokens[at++];
  if (!COMPARISONS.includes(op as typeof COMPARISONS[number])) {
    fail(
      `expected a comparison (${COMPARISONS.join(" ")})${op === undefined ? "" : `, got "${op}"`}`,
    );
  }
  const right = sum();
  if (at < tokens.length) fail(`unexpected "${tokens[at]}"`);
  const names = new Set<string>();
  const collect = (n: Node): void => {
    if (n.kind === "name") names.add(n.name);
    if (n.kind === "op") [n.left, n.right].forEach(collect);
  };
  collect(left);
  collect(right);
  const evaluate = (n: Node, values: Readonly<Record<string, ParameterValue>>): number => {
    if (n.kind === "number") return n.value;
    if (n.kind === "name") return Number(values[n.name]);
    const [a, b] = [evaluate(n.left, values), evaluate(n.right, values)];
    return n.op === "+" ? a + b : n.op === "-" ? a - b : n.op === "*" ? a * b : a / b;
  };
  return {
    text,
    names: [...names],
    holds(values) {
      const [a, b] = [evaluate(left, values), evaluate(right, values)];
      switch (op) {
        case "<":
          return a < b;
        case "<=":
          return a <= b;
        case ">":
          return a > b;
        case ">=":
          return a >= b;
        case "==":
          return a === b;
        default:
          return a !== b;
      }
    },
  };
}

/** Every combination of the parameters' values, the first parameter outermost. */
export function combinations(
  parameters: Readonly<Record<string, readonly ParameterValue[]>>,
): Array<Record<string, ParameterValue>> {
  return expand(
    Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, [...v]])),
  ) as Array<Record<string, ParameterValue>>;
}

/**
 * The variants: each combination the constraints allow, its command from
 * `template` (flag parameters, names starting with `-`, appended as
 * `NAME VALUE`). `left` counts the combinations the constraints left out.
 */
export function engineVariants(
  options: {
    template: readonly string[];
    env: Readonly<Record<string, string>>;
    parameters: Readonly<Record<string, readonly ParameterValue[]>>;
    constraints: readonly ParameterConstraint[];
    model: string;
  },
): { variants: EngineVariant[]; left: number } {
  const varying = Object.entries(options.parameters).filter(([, v]) => v.length > 1).map(([k]) =>
    k
  );
  const flags = Object.keys(options.parameters).filter((name) => name.startsWith("-"));
  const all = combinations(options.parameters);
  const allowed = all.filter((c) => options.constraints.every((k) => k.holds(c)));
  const variants = allowed.map((parameters): EngineVariant => {
    const command = [
      ...fillPlaceholders(options.template, parameters),
      ...flags.flatMap((flag) => [flag, String(parameters[flag])]),
    ];
    const env = Object.fromEntries(
      Object.entries(options.env).map(([k, v]) => [k, fillPlaceholders([v], parameters)[0]!]),
    );
    const name = varying.map((k) => `${k}=${parameters[k]}`).join(",") || "default";
    return { name, model: options.model, parameters, command, env };
  });
  return { variants, left: all.length - allowed.length };
}
