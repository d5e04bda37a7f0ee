/**
 * A small, fast HTTP/1.1 client: keep-alive connections over Deno.connect (or
 * TLS) for the request loop, and a convenience client for control-plane calls.
 */
export {
  type ByteConn,
  connect,
  type Connector,
  connectTcp,
  connectTls,
  DEFAULT_CONNECT_TIMEOUT_MS,
  type Endpoint,
  formatAddress,
  type TlsOptions,
} from "./connect.ts";
export {
  type ExchangeTiming,
  Http1Connection,
  isSuccess,
  type ResponseHead,
} from "./connection.ts";
export { Http1Client, type HttpRequestOptions, type HttpResponse } from "./client.ts";
export { buildRequest, type RequestOptions } from "./request.ts";
