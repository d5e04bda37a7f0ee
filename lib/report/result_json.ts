/**
 * Level results as JSON text and back, for checkpoints (the sweep's, the
 * capacity search's): JSON has no Map or bigint, and results carry both
 * (percentiles, wall-clock ns).
 */

export function resultReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { $map: [...value] };
  if (typeof value === "bigint") return { $bigint: String(value) };
  return value;
}

export function resultReviver(_key: string, value: unknown): unknown {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.$map)) return new Map(o.$map as Array<[unknown, unknown]>);
    if (typeof o.$bigint === "string") return BigInt(o.$bigint);
  }
  return value;
}
