/**
 * Splits argv into option and positional tokens as node:util's parseArgs does
 * with `{strict: false, allowPositionals: true, tokens: true}`, plus
 * getopt_long's abbreviations of long options (perf_analyzer parses with
 * getopt_long: `--concurrency 4` is `--concurrency-range 4`). Our own because
 * importing node:util loads much of Deno's Node layer, about 5 ms of every
 * start-up, `--version` included.
 */

export interface TokenOptions {
  /** perfAnalyzer: the name is perf_analyzer's, so abbreviations resolve among these first. */
  [name: string]: { type: "boolean" | "string"; short?: string; perfAnalyzer?: boolean };
}

export type ArgToken =
  /**
   * `name` is the long name (the letter itself for an unknown short option);
   * `ambiguous`: the long names an abbreviation could stand for.
   */
  | { kind: "option"; name: string; rawName: string; value?: string; ambiguous?: string[] }
  | { kind: "positional"; value: string };

/**
 * The long name `name` stands for: itself, or the one option it abbreviates.
 * As perf_analyzer's getopt_long sees only its own options, an abbreviation
 * of one of them means it even where one of ours starts alike.
 */
function resolveLong(name: string, options: TokenOptions): { name: string; ambiguous?: string[] } {
  if (name === "" || Object.hasOwn(options, name)) return { name };
  const all = Object.keys(options).filter((n) => n.startsWith(name));
  const theirs = all.filter((n) => options[n].perfAnalyzer);
  const matches = theirs.length > 0 ? theirs : all;
  if (matches.length === 1) return { name: matches[0] };
  return matches.length > 1 ? { name, ambiguous: matches } : { name };
}

function longName(short: string, options: TokenOptions): string {
  return Object.keys(options).find((name) => options[name].short === short) ?? short;
}

const isString = (name: string, options: TokenOptions) =>
  Object.hasOwn(options, name) && options[name].type === "string";

/** A dash and one character ("-v"), or a dash and several ("-vvu", "-uVALUE"). */
const isShort = (arg: string) => arg.length >= 2 && arg[0] === "-" && arg[1] !== "-";

export function tokenize(args: readonly string[], options: TokenOptions): ArgToken[] {
  const tokens: ArgToken[] = [];
  const rest = [...args];
  // An option alone in its argument: a string option takes the next argument whatever it
  // looks like, as node:util does.
  const alone = (name: string, rawName: string, ambiguous?: string[]): ArgToken => {
    const value = isString(name, options) && rest.length > 0 ? rest.shift() : undefined;
    return {
      kind: "option",
      name,
      rawName,
      ...(value === undefined ? {} : { value }),
      ...(ambiguous ? { ambiguous } : {}),
    };
  };
  while (rest.length > 0) {
    const arg = rest.shift()!;
    if (arg === "--") {
      for (const value of rest) tokens.push({ kind: "positional", value });
      break;
    }
    if (isShort(arg)) {
      const name = longName(arg[1], options);
      if (arg.length === 2) {
        tokens.push(alone(name, arg));
      } else if (isString(name, options)) {
        tokens.push({ kind: "option", name, rawName: `-${arg[1]}`, value: arg.slice(2) });
      } else {
        // A group of flags: the first string option takes the rest of the group as its value.
        const expanded: string[] = [];
        for (let i = 1; i < arg.length; i++) {
          if (!isString(longName(arg[i], options), options) || i === arg.length - 1) {
            expanded.push(`-${arg[i]}`);
          } else {
            expanded.push(`-${arg.slice(i)}`);
            break;
          }
        }
        rest.unshift(...expanded);
      }
      continue;
    }
    if (arg.length > 2 && arg.startsWith("--")) {
      if (arg.includes("=", 3)) {
        // Split at the first "=", even at index 2 ("--=a=b" is the option "" = "a=b"), as node:util.
        const equals = arg.indexOf("=");
        const given = arg.slice(2, equals);
        const { name, ambiguous } = resolveLong(given, options);
        tokens.push({
          kind: "option",
          name,
          rawName: `--${given}`,
          value: arg.slice(equals + 1),
          ...(ambiguous ? { ambiguous } : {}),
        });
      } else {
        const { name, ambiguous } = resolveLong(arg.slice(2), options);
        tokens.push(alone(name, arg, ambiguous));
      }
      continue;
    }
    tokens.push({ kind: "positional", value: arg });
  }
  return tokens;
}
