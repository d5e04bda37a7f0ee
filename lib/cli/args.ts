/** argv -> the command and raw option values, merged with a --config file's. */
import { tokenize, type TokenOptions } from "./_argv.ts";
import {
  type Command,
  optionLabel,
  OPTIONS,
  type OptionType,
  PROFILE_COMMANDS,
  type RawOptions,
} from "./options.ts";
import { UsageError } from "../types/errors.ts";
import { loadStagesParser, STAGES_OPTIONS } from "./_shape_options.ts";

export interface ParsedArgs {
  command: Command;
  /** --help or --version was given: print that instead of running the command. */
  action?: "help" | "version";
  options: RawOptions;
  /** The arguments that are not options: `inferperf merge`'s and `compare`'s files; others take none. */
  operands: string[];
  /** What was ignored, as perf_analyzer ignores it: one line each, for stderr. */
  warnings: string[];
}

/** The commands that take operands after their options. */
const TAKES_OPERANDS: ReadonlySet<Command> = new Set(["merge", "compare"]);

/** Option types that may be given several times, their values collected in a list. */
const REPEATABLE: ReadonlySet<OptionType> = new Set(["list", "comma-list", "dict"]);
const COMMANDS: readonly string[] = [
  "profile",
  "serve",
  "demo",
  "report",
  "merge",
  "compare",
  "input-template",
] satisfies Command[];

/** `--flag=VALUE` of a boolean option (perf_analyzer's flags take no value; YAML's do). */
const BOOLEAN_VALUES: ReadonlyMap<string, boolean> = new Map([
  ["true", true],
  ["1", true],
  ["false", false],
  ["0", false],
]);

const TOKEN_OPTIONS: TokenOptions = Object.fromEntries(
  OPTIONS.flatMap((o) => {
    const token = {
      type: o.type === "boolean" || o.type === "count" ? "boolean" as const : "string" as const,
      ...(o.short ? { short: o.short } : {}),
      ...(o.perfAnalyzer ? { perfAnalyzer: true } : {}),
    };
    const aliases = (o.aliases ?? []).map((alias) => [alias, { type: token.type }]);
    return [[o.name, token], ...aliases];
  }),
);

/**
 * perf_analyzer's getopt_long moves arguments that are not options aside and
 * never reads them (genai-perf's --fixed-schedule command line ends with a
 * stray "None"); so does a profile, saying so, except for a "true" after a
 * flag, which says what happens (perf_analyzer's usage shows
 * `--ssl-grpc-use-ssl <bool>`). `flag`: the flag just before, as written and
 * by name.
 */
function strayWarning(
  value: string,
  flag: { raw: string; name: string } | undefined,
): string | undefined {
  if (flag === undefined) return `Ignored argument "${value}": perf_analyzer ignores it too`;
  const on = BOOLEAN_VALUES.get(value.toLowerCase());
  if (on === true) return undefined;
  const off = on === false ? `; --${flag.name}=false turns it off` : "";
  return `Ignored argument "${value}": ${flag.raw} takes no value and is on, as in perf_analyzer${off}`;
}

/** Splits argv into a command and raw option values. */
export function parseArgv(argv: readonly string[]): ParsedArgs {
  const first = argv[0];
  const command = (first !== undefined && COMMANDS.includes(first) ? first : "profile") as Command;
  const args = command === first ? argv.slice(1) : argv;
  const tokens = tokenize(args, TOKEN_OPTIONS);
  const errors: string[] = [];
  const warnings: string[] = [];
  const options: RawOptions = new Map();
  const operands: string[] = [];
  // The variadic option whose values positional arguments still extend.
  let variadic: string | undefined;
  // The flag given just before: a positional after it is not its value.
  let flag: { raw: string; name: string } | undefined;
  for (const token of tokens) {
    if (token.kind === "positional") {
      if (variadic !== undefined) (options.get(variadic) as string[]).push(token.value);
      else if (TAKES_OPERANDS.has(command)) operands.push(token.value);
      else if (!PROFILE_COMMANDS.includes(command)) {
        errors.push(`Unexpected argument "${token.value}"`);
      } else {
        const warning = strayWarning(token.value, flag);
        if (warning !== undefined) warnings.push(warning);
      }
      flag = undefined;
      continue;
    }
    variadic = undefined;
    flag = undefined;
    if (token.ambiguous) {
      errors.push(
        `Option "${token.rawName}" is ambiguous: it abbreviates ${
          token.ambiguous.map((name) => `--${name}`).join(", ")
        }`,
      );
      continue;
    }
    const def = OPTIONS.find((o) => o.name === token.name || o.aliases?.includes(token.name));
    if (!def) {
      errors.push(`Unknown option "${token.rawName}"`);
      continue;
    }
    if (!(def.commands ?? PROFILE_COMMANDS).includes(command)) {
      errors.push(`Option ${optionLabel(def.name)} does not apply to "inferperf ${command}"`);
      continue;
    }
    if (def.type === "boolean" || def.type === "count") {
      const on = token.value === undefined
        ? true
        : def.type === "boolean"
        ? BOOLEAN_VALUES.get(token.value.toLowerCase())
        : undefined;
      if (on === undefined) {
        const allowed = def.type === "boolean" ? " but true, false, 1 or 0" : "";
        errors.push(
          `Option ${optionLabel(def.name)} takes no value${allowed}, got "${token.value}"`,
        );
      } else if (def.type === "count") {
        options.set(def.name, ((options.get(def.name) as number | undefined) ?? 0) + 1);
      } else options.set(def.name, on);
      if (token.value === undefined) flag = { raw: token.rawName, name: def.name };
      continue;
    }
    if (token.value === undefined) {
      errors.push(`Option ${optionLabel(def.name)} needs a value`);
      continue;
    }
    if (REPEATABLE.has(def.type)) {
      const list = (options.get(def.name) as string[] | undefined) ?? [];
      list.push(token.value);
      options.set(def.name, list);
      if (def.variadic) variadic = def.name;
    } else options.set(def.name, token.value);
  }
  if (errors.length > 0) throw new UsageError(errors);
  const parsed = { command, options, operands, warnings };
  if (options.get("help")) return { ...parsed, action: "help" };
  if (options.get("version")) return { ...parsed, action: "version" };
  return parsed;
}

/** The command line's options on top of its --config file's, if one was given. */
export async function withConfigFile(parsed: ParsedArgs): Promise<RawOptions> {
  const cli = new Map(parsed.options);
  const path = cli.get("config");
  cli.delete("config");
  if (path === undefined) {
    if (STAGES_OPTIONS.some((name) => cli.has(name))) await loadStagesParser();
    return cli;
  }
  // The YAML parser loads only for a config file: about 20 ms of start-up from source.
  const { readConfigFile } = await import("./yaml.ts");
  // Its points and searches may name stages files too; the parser is loaded already.
  await loadStagesParser();
  const file = await readConfigFile(String(path), { command: parsed.command });
  return new Map([...file, ...cli]);
}
