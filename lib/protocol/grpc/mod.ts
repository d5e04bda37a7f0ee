/**
 * KServe v2 / Triton gRPC: the client (unary and streaming inference,
 * metadata, configuration, statistics) and the HTTP/2 and gRPC wire layers
 * it shares with the reference server.
 *
 * @module
 */
export { DEFAULT_GRPC_PORT, GrpcClient, type GrpcClientOptions, parseGrpcUrl } from "./client.ts";
export {
  errorName,
  headerBlock,
  Http2Error,
  Http2Session,
  Http2Stream,
  type SessionOptions,
  type StreamHandler,
  StreamResetError,
  type Transport,
} from "./http2.ts";
export { type Compression, SERVICE_PATH, Status, statusName } from "./wire.ts";
