/** KServe v2 tensor datatypes and their element sizes. */

export const DATATYPES = [
  "BOOL",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "FP16",
  "BF16",
  "FP32",
  "FP64",
  "BYTES",
] as const;

export type Datatype = typeof DATATYPES[number];

const SIZES: Record<Datatype, number> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  BF16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: 0,
};

export function isDatatype(value: string): value is Datatype {
  return (DATATYPES as readonly string[]).includes(value);
}

/** Bytes per element; 0 for BYTES, whose elements carry their own length prefix. */
export function elementSize(datatype: Datatype): number {
  return SIZES[datatype];
}

/** Number of elements in a fully defined shape (an empty shape is a scalar). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
