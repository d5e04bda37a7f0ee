/** Tensors, their specs and the requests that carry them. */
import type { Datatype } from "./datatype.ts";

/** One tensor: row-major little-endian bytes; BYTES elements are 4-byte LE length + bytes. */
export interface Tensor {
  name: string;
  datatype: Datatype;
  /** Full shape including the batch dimension when the model batches. */
  shape: number[];
  data: Uint8Array;
}

/**
 * A parameter whose wire type its JS value does not tell (gRPC has int64,
 * uint64 and double parameters; a JS number can be any of them).
 */
export interface TypedParameter {
  type: "int64" | "uint64" | "double";
  value: number | bigint;
}

export type ParameterValue = boolean | number | bigint | string | TypedParameter;

export interface InferRequest {
  inputs: Tensor[];
  /** Outputs to request; empty means all outputs of the model. */
  outputs: string[];
  /** Request-level parameters (sequence_id, custom --request-parameter values, ...). */
  parameters?: Record<string, ParameterValue>;
  /** HTTP header fields of this request alone (a session's X-Correlation-ID); -H overrides them. */
  headers?: Record<string, string>;
}

export interface TensorSpec {
  name: string;
  datatype: Datatype;
  /** Dimensions without the batch dimension; -1 marks a variable dimension. */
  dims: number[];
  /** An input the model configuration marks `optional: true`: requests may leave it out. */
  optional?: boolean;
}
