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

export interface ParsedArgs {
  command: Command;
  /** --help or --version was given: print that instead of running the command. */
  action?: "help" | "version";
  options: RawOptions;
  /** The arguments that are not options: `inferperf merge`'s runs; other commands take none. */
  operands: string[];
}

/** The commands that take operands after their options. */
const TAKES_OPERANDS: ReadonlySet<Command> = new Set(["merge"]);

/** Option types that may be given several times, their values collected in a list. */
const REPEATABLE: ReadonlySet<OptionType> = new Set(["list", "comma-list", "dict"]);
const COMMANDS: readonly string[] = [
  "profile",
  "serve",
  "demo",
  "report",
  "merge",
] satisfies Command[];

const TOKEN_OPTIONS: TokenOptions = Object.fromEntries(
  OPTIONS.map((o) => [o.name, {
    type: o.type === "boolean" || o.type === "count" ? "boolean" as const : "string" as const,
    ...(o.short ? { short: o.short } : {}),
  }]),
);

/** Splits argv into a command and raw option values. */
export function parseArgv(argv: readonly string[]): ParsedArgs {
  const first = argv[0];
  const command = (first !== undefined && COMMANDS.includes(first) ? first : "profile") as Command;
  const args = command === first ? argv.slice(1) : argv;
  const tokens = tokenize(args, TOKEN_OPTIONS);
  const errors: string[] = [];
  const options: RawOptions = new Map();
  const operands: string[] = [];
  // The variadic option whose values positional arguments still extend.
  let variadic: string | undefined;
  for (const token of tokens) {
    if (token.kind === "positional") {
      if (variadic !== undefined) (options.get(variadic) as string[]).push(token.value);
      else if (TAKES_OPERANDS.has(command)) operands.push(token.value);
      else errors.push(`Unexpected argument "${token.value}"`);
      continue;
    }
    variadic = undefined;
    const def = OPTIONS.find((o) => o.name === token.name);
    if (!def) {
      errors.push(`Unknown option "${token.rawName}"`);
      continue;
    }
    if (!(def.commands ?? PROFILE_COMMANDS).includes(command)) {
      errors.push(`Option ${optionLabel(def.name)} does not apply to "inferperf ${command}"`);
      continue;
    }
    if (def.type === "boolean" || def.type === "count") {
      if (token.value !== undefined) {
        errors.push(`Option ${optionLabel(def.name)} takes no value, got "${token.value}"`);
      } else if (def.type === "count") {
        options.set(def.name, ((options.get(def.name) as number | undefined) ?? 0) + 1);
      } else options.set(def.name, true);
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
  if (options.get("help")) return { command, action: "help", options, operands };
  if (options.get("version")) return { command, action: "version", options, operands };
  return { command, options, operands };
}

/** The command line's options on top of its --config file's, if one was given. */
export async function withConfigFile(parsed: ParsedArgs): Promise<RawOptions> {
  const cli = new Map(parsed.options);
  const path = cli.get("config");
  cli.delete("config");
  if (path === undefined) return cli;
  // The YAML parser loads only for a config file: about 20 ms of start-up from source.
  const { readConfigFile } = await import("./yaml.ts");
  const file = await readConfigFile(String(path), { command: parsed.command });
  return new Map([...file, ...cli]);
}
