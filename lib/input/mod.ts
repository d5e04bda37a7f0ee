/** Tensor datatypes, the tensor codec, input data (generated, files, directories) and validation. */
export * from "./codec.ts";
export * from "./generate.ts";
export * from "./errors.ts";
export * from "./shape.ts";
export * from "./data_set.ts";
export * from "./json_data.ts";
export * from "./directory_data.ts";
export * from "./input_data.ts";
export * from "./validation.ts";
