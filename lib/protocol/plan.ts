/**
 * The client part of a run's plan: which server and model, and how clients
 * connect, encode and what the service kind adds (the Client options of
 * --help). lib/cli builds it; the service kinds' clients read it.
 */
import type { EndpointType } from "../input/llm_endpoints.ts";
import type { ParameterValue } from "../types/tensor.ts";

/** --endpoint-type template: where answers and stream events hold the text and the counts. */
export interface TemplateFields {
  /** JSON path of the text (AIPerf's response_field); absent: looked for where APIs put it. */
  text?: string;
  /** JSON path of the output token count (the count so far, or the total). */
  tokens?: string;
  /** JSON path of the prompt token count. */
  promptTokens?: string;
}

/** A --request-parameter, its value typed as TYPE says. */
export interface RequestParameter {
  name: string;
  value: ParameterValue;
}

/** --ssl-grpc-* files (TLS is on when this is set). */
export interface GrpcSslConfig {
  rootCertificatesFile?: string;
  privateKeyFile?: string;
  certificateChainFile?: string;
}

/** --ssl-https-* settings, used with an https:// URL. */
export interface HttpsSslConfig {
  /** --ssl-https-verify-peer 1: the server's certificate chain is checked. */
  verifyPeer: boolean;
  verifyHost: boolean;
  caCertificatesFile?: string;
  clientCertificateFile?: string;
  clientCertificateType: "PEM" | "DER";
  privateKeyFile?: string;
  privateKeyType: "PEM" | "DER";
}

/** The target and its client: -m, -u, -i, headers, TLS, tensor formats, --service-kind. */
export interface ClientPlan {
  model: string;
  modelVersion: string;
  /** --bls-composing-models: models whose statistics are reported with the profiled one. */
  composingModels: Array<{ name: string; version: string }>;
  url: string;
  /** Several -u URLs (--service-kind openai): `url` is the first; connections take each in turn. */
  urls?: readonly string[];
  /** -i (triton_c_api sends nothing over a network and ignores it). */
  protocol: "http" | "grpc";
  headers: Record<string, string>;
  requestTimeoutMs: number;
  inputTensorFormat: "binary" | "json";
  outputTensorFormat: "binary" | "json";
  streaming: boolean;
  grpcCompression: "none" | "gzip" | "deflate";
  requestParameters: RequestParameter[];
  grpcSsl?: GrpcSslConfig;
  httpsSsl: HttpsSslConfig;
  /** --service-kind: the name of an entry of lib/protocol/kinds/mod.ts. */
  serviceKind: string;
  /** --triton-server-directory and --model-repository of triton_c_api; "" otherwise. */
  tritonServerDirectory: string;
  modelRepository: string;
  /** --endpoint of --service-kind openai, leading slashes removed; "" otherwise. */
  endpoint: string;
  /** --service-kind openai: the API of the endpoint (--endpoint-type, or the type of --endpoint). */
  endpointType?: EndpointType;
  /** --endpoint-type template: the answers' JSON paths. */
  templateFields?: TemplateFields;
  /** --model-signature-name (tfserving). */
  modelSignatureName: string;
  /** --shared-memory ("cuda" is refused: it needs a GPU). */
  sharedMemory: "none" | "system";
  outputSharedMemorySize: number;
}
