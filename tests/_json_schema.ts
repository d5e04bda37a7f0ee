/**
 * The subset of JSON Schema (2020-12) that docs/*.schema.json use, enough to
 * validate exports in tests: type, const, enum, properties, required,
 * additionalProperties, propertyNames, items, minimum, pattern and local $ref.
 * Bigints (exact nanosecond timestamps) count as integers.
 */

// deno-lint-ignore no-explicit-any
type Schema = Record<string, any>;

function typeOf(value: unknown): string[] {
  if (value === null) return ["null"];
  if (Array.isArray(value)) return ["array"];
  if (typeof value === "bigint") return ["integer", "number"];
  if (typeof value === "number") {
    return Number.isInteger(value) ? ["integer", "number"] : ["number"];
  }
  return [typeof value];
}

function resolve(root: Schema, ref: string): Schema {
  if (!ref.startsWith("#/")) throw new RangeError(`Only local $ref are supported, got "${ref}"`);
  return ref.slice(2).split("/").reduce((node, key) => node[key], root);
}

function check(
  value: unknown,
  schema: Schema,
  at: string,
  context: { root: Schema; errors: string[] },
): void {
  const { errors } = context;
  if (schema.$ref) check(value, resolve(context.root, schema.$ref), at, context);
  if (schema.type !== undefined) {
    const wanted: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!typeOf(value).some((t) => wanted.includes(t))) {
      errors.push(`${at}: expected ${wanted.join(" or ")}, got ${typeOf(value)[0]}`);
      return;
    }
  }
  if ("const" in schema && value !== schema.const) errors.push(`${at}: expected ${schema.const}`);
  if (schema.enum && !schema.enum.includes(value)) {
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  }
  if (schema.minimum !== undefined && (typeof value === "number" || typeof value === "bigint")) {
    if (value < schema.minimum) errors.push(`${at}: ${value} < ${schema.minimum}`);
  }
  if (schema.pattern && typeof value === "string" && !new RegExp(schema.pattern).test(value)) {
    errors.push(`${at}: "${value.slice(0, 40)}" does not match ${schema.pattern}`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => check(item, schema.items, `${at}[${i}]`, context));
  }
  if (typeOf(value)[0] !== "object") return;
  const object = value as Record<string, unknown>;
  for (const key of schema.required ?? []) {
    if (!(key in object)) errors.push(`${at}: missing "${key}"`);
  }
  for (const [key, item] of Object.entries(object)) {
    const path = `${at}.${key}`;
    if (schema.propertyNames) check(key, schema.propertyNames, `${path} (name)`, context);
    if (schema.properties?.[key]) check(item, schema.properties[key], path, context);
    else if (schema.additionalProperties === false) errors.push(`${path}: not allowed`);
    else if (typeof schema.additionalProperties === "object") {
      check(item, schema.additionalProperties, path, context);
    }
  }
}

/** Every violation of `schema` by `value`, as "path: problem" lines; empty when valid. */
export function validate(value: unknown, schema: Schema): string[] {
  const errors: string[] = [];
  check(value, schema, "$", { root: schema, errors });
  return errors;
}

/** Reads a schema of the repository's docs/ folder. */
export async function loadSchema(name: string): Promise<Schema> {
  return JSON.parse(await Deno.readTextFile(new URL(`../docs/${name}`, import.meta.url)));
}
