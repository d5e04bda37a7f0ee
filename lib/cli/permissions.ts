/**
 * Turns Deno's permission errors into one line that names the refused
 * resource and the exact flag that grants it, for users who run inferperf
 * with narrower permissions than a run needs.
 *
 * @module
 */

/** A permission a run lacked. */
export interface MissingPermission {
  /** Deno's name for it: "net", "read", "write", "env", "sys", "run", "ffi" or "import". */
  name: string;
  /** What was refused, e.g. "127.0.0.1:8000" or "data.json"; absent when Deno names nothing. */
  resource?: string;
  /** Refused in a compiled binary, whose permissions were fixed by `deno compile`. */
  compiled: boolean;
}

/**
 * Deno's wording (deno_permissions): "Requires net access to "host:port",
 * run again with the --allow-net flag", or in a compiled binary "...,
 * specify the required permissions during compilation using `deno compile
 * --allow-net`". Matched on the text too, because an error that crossed a
 * worker boundary or was wrapped keeps only its message.
 */
const DENIED =
  /Requires (\w+) access(?: to ("(?:[^"\\]|\\.)*"|[^,]+))?, (run again with the --allow-\w+ flag|specify the required permissions during compilation)/;

/** Characters a POSIX shell takes literally in an unquoted word. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

function unquote(text: string): string {
  if (!text.startsWith('"')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(1, -1);
  }
}

function parse(message: string): MissingPermission | undefined {
  const match = DENIED.exec(message);
  if (!match) return undefined;
  const [, name, resource, advice] = match;
  return {
    name,
    ...(resource !== undefined ? { resource: unquote(resource) } : {}),
    compiled: !advice.startsWith("run again"),
  };
}

/** The permission error in `error` or its causes, if any. */
export function findMissingPermission(error: unknown): MissingPermission | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    const missing = parse(current.message);
    if (missing) return missing;
    current = current.cause;
  }
  return undefined;
}

/**
 * What to grant for a resource. Port 0 asks the system for a free port, so
 * the port that follows is unknown in advance: grant the host.
 */
function grant(missing: MissingPermission): string | undefined {
  const resource = missing.resource;
  if (resource === undefined || resource.startsWith("<")) return undefined;
  return missing.name === "net" && resource.endsWith(":0") ? resource.slice(0, -2) : resource;
}

/** The flag that grants exactly the refused resource, quoted for a POSIX shell when needed. */
export function permissionFlag(missing: MissingPermission): string {
  const value = grant(missing);
  const flag = value === undefined ? `--allow-${missing.name}` : `--allow-${missing.name}=${value}`;
  return SHELL_SAFE.test(flag) ? flag : `'${flag.replaceAll("'", "'\\''")}'`;
}

/** One line for the user: what was refused and what to add. */
export function formatMissingPermission(missing: MissingPermission): string {
  const what = missing.resource === undefined
    ? `${missing.name} access`
    : `${missing.name} access to "${missing.resource}"`;
  const flag = permissionFlag(missing);
  return missing.compiled
    ? `Permission denied: ${what}; this binary was compiled without ${flag}`
    : `Permission denied: ${what}; run again with ${flag}`;
}
