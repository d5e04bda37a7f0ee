/** Tensor datatypes, the tensor codec and generated input data. */
export * from "./datatype.ts";
export * from "./codec.ts";
export * from "./generate.ts";
