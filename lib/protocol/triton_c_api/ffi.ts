/**
 * The part of Triton's in-process C API (include/triton/core/tritonserver.h,
 * API 1.x) that inferperf calls, as Deno.dlopen symbol definitions. Every
 * TRITONSERVER_Error* comes back as a pointer: null is success.
 */

const P = "pointer" as const;
const BUF = "buffer" as const;

export const TRITON_SYMBOLS = {
  TRITONSERVER_ApiVersion: { parameters: [BUF, BUF], result: P },
  TRITONSERVER_ErrorNew: { parameters: ["u32", BUF], result: P },
  TRITONSERVER_ErrorMessage: { parameters: [P], result: P },
  TRITONSERVER_ErrorDelete: { parameters: [P], result: "void" },
  TRITONSERVER_StringToDataType: { parameters: [BUF], result: "u32" },
  TRITONSERVER_DataTypeString: { parameters: ["u32"], result: P },

  TRITONSERVER_ServerOptionsNew: { parameters: [BUF], result: P },
  TRITONSERVER_ServerOptionsDelete: { parameters: [P], result: P },
  TRITONSERVER_ServerOptionsSetModelRepositoryPath: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerOptionsSetBackendDirectory: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerOptionsSetRepoAgentDirectory: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerOptionsSetModelControlMode: { parameters: [P, "u32"], result: P },
  TRITONSERVER_ServerOptionsSetStartupModel: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerOptionsSetStrictModelConfig: { parameters: [P, "bool"], result: P },
  TRITONSERVER_ServerOptionsSetLogVerbose: { parameters: [P, "i32"], result: P },
  TRITONSERVER_ServerOptionsSetLogInfo: { parameters: [P, "bool"], result: P },
  TRITONSERVER_ServerOptionsSetLogWarn: { parameters: [P, "bool"], result: P },
  TRITONSERVER_ServerOptionsSetLogError: { parameters: [P, "bool"], result: P },
  TRITONSERVER_ServerOptionsSetExitTimeout: { parameters: [P, "u32"], result: P },
  TRITONSERVER_ServerOptionsSetMetrics: { parameters: [P, "bool"], result: P },

  // The server's own threads may be busy in a callback into JS: calls that
  // wait for them run off the JS thread (nonblocking) so they cannot deadlock.
  TRITONSERVER_ServerNew: { parameters: [BUF, P], result: P, nonblocking: true },
  TRITONSERVER_ServerStop: { parameters: [P], result: P, nonblocking: true },
  TRITONSERVER_ServerDelete: { parameters: [P], result: P, nonblocking: true },
  TRITONSERVER_ServerLoadModel: { parameters: [P, BUF], result: P, nonblocking: true },
  TRITONSERVER_ServerIsLive: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerIsReady: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerModelIsReady: { parameters: [P, BUF, "i64", BUF], result: P },
  TRITONSERVER_ServerMetadata: { parameters: [P, BUF], result: P },
  TRITONSERVER_ServerModelMetadata: { parameters: [P, BUF, "i64", BUF], result: P },
  TRITONSERVER_ServerModelConfig: { parameters: [P, BUF, "i64", "u32", BUF], result: P },
  TRITONSERVER_ServerModelStatistics: { parameters: [P, BUF, "i64", BUF], result: P },
  TRITONSERVER_MessageSerializeToJson: { parameters: [P, BUF, BUF], result: P },
  TRITONSERVER_MessageDelete: { parameters: [P], result: P },

  TRITONSERVER_ResponseAllocatorNew: { parameters: [BUF, P, P, P], result: P },
  TRITONSERVER_ResponseAllocatorDelete: { parameters: [P], result: P },

  TRITONSERVER_InferenceRequestNew: { parameters: [BUF, P, BUF, "i64"], result: P },
  TRITONSERVER_InferenceRequestDelete: { parameters: [P], result: P },
  TRITONSERVER_InferenceRequestSetFlags: { parameters: [P, "u32"], result: P },
  TRITONSERVER_InferenceRequestSetCorrelationId: { parameters: [P, "u64"], result: P },
  TRITONSERVER_InferenceRequestSetCorrelationIdString: { parameters: [P, BUF], result: P },
  TRITONSERVER_InferenceRequestSetPriorityUInt64: { parameters: [P, "u64"], result: P },
  TRITONSERVER_InferenceRequestSetTimeoutMicroseconds: { parameters: [P, "u64"], result: P },
  TRITONSERVER_InferenceRequestAddInput: { parameters: [P, BUF, "u32", BUF, "u64"], result: P },
  TRITONSERVER_InferenceRequestAppendInputData: {
    parameters: [P, BUF, P, "usize", "u32", "i64"],
    result: P,
  },
  TRITONSERVER_InferenceRequestAddRequestedOutput: { parameters: [P, BUF], result: P },
  TRITONSERVER_InferenceRequestSetReleaseCallback: { parameters: [P, "function", P], result: P },
  TRITONSERVER_InferenceRequestSetResponseCallback: {
    parameters: [P, P, P, "function", P],
    result: P,
  },
  TRITONSERVER_InferenceRequestSetStringParameter: { parameters: [P, BUF, BUF], result: P },
  TRITONSERVER_InferenceRequestSetIntParameter: { parameters: [P, BUF, "i64"], result: P },
  TRITONSERVER_InferenceRequestSetBoolParameter: { parameters: [P, BUF, "bool"], result: P },
  TRITONSERVER_InferenceRequestSetDoubleParameter: { parameters: [P, BUF, "f64"], result: P },
  TRITONSERVER_ServerInferAsync: { parameters: [P, P, P], result: P },

  TRITONSERVER_InferenceResponseDelete: { parameters: [P], result: P },
  TRITONSERVER_InferenceResponseError: { parameters: [P], result: P },
  TRITONSERVER_InferenceResponseOutputCount: { parameters: [P, BUF], result: P },
  TRITONSERVER_InferenceResponseOutput: {
    parameters: [P, "u32", BUF, BUF, BUF, BUF, BUF, BUF, BUF, BUF, BUF],
    result: P,
  },
} as const satisfies Deno.ForeignLibraryInterface;

export type TritonLibrary = Deno.DynamicLibrary<typeof TRITON_SYMBOLS>;

/** TRITONSERVER_ModelControlMode */
export const MODEL_CONTROL_EXPLICIT = 2;
/** TRITONSERVER_MemoryType */
export const MEMORY_CPU = 0;
/** TRITONSERVER_RequestFlag */
export const SEQUENCE_START = 1;
export const SEQUENCE_END = 2;
/** TRITONSERVER_ResponseCompleteFlag */
export const RESPONSE_COMPLETE_FINAL = 1;

/** The signatures of the callbacks Triton calls. */
export const RESPONSE_COMPLETE_FN = { parameters: [P, "u32", P], result: "void" } as const;
export const REQUEST_RELEASE_FN = { parameters: [P, "u32", P], result: "void" } as const;
export const ALLOC_FN = {
  parameters: [P, P, "usize", "u32", "i64", P, P, P, P, P],
  result: P,
} as const;
export const RELEASE_FN = { parameters: [P, P, P, "usize", "u32", "i64"], result: P } as const;
