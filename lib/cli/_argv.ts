/**
 * Splits argv into option and positional tokens exactly as node:util's
 * parseArgs does with `{strict: false, allowPositionals: true, tokens: true}`.
 * Our own because importing node:util loads much of Deno's Node layer, about
 * 5 ms of every start-up, `--version` included.
 */

export interface TokenOptions {
  [name: string]: { type: "boolean" | "string"; short?: string };
}

export type ArgToken =
  /** `name` is the long name (the letter itself for an unknown short option). */
  | { kind: "option"; name: string; rawName: string; value?: string }
  | { kind: "positional"; value: string };

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
  const alone = (name: string, rawName: string): ArgToken => {
    const value = isString(name, options) && rest.length > 0 ? rest.shift() : undefined;
    return { kind: "option", name, rawName, ...(value === undefined ? {} : { value }) };
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
        const name = arg.slice(2, equals);
        tokens.push({ kind: "option", name, rawName: `--${name}`, value: arg.slice(equals + 1) });
      } else {
        tokens.push(alone(arg.slice(2), arg));
      }
      continue;
    }
    tokens.push({ kind: "positional", value: arg });
  }
  return tokens;
}
