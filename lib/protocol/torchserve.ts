/**
 * TorchServe client (--service-kind torchserve): `POST /predictions/{model}`
 * over the fast HTTP/1.1 client, the body being the file that the JSON input
 * data names, as in perf_analyzer:
 * `{"data": [{"TORCHSERVE_INPUT": ["kitten_small.jpg"]}]}` (paths relative to
 * the working directory). TorchServe has no statistics extension: reports
 * hold client-side figures only.
 */
import { decodeBytesElements, encodeBytesElements } from "../input/codec.ts";
import { InputError } from "../input/errors.ts";
import {
  fixedModelInfo,
  type HttpClientOptions,
  HttpSessions,
  HttpTarget,
  PreparedHttpRequest,
} from "./_http_session.ts";
import type { InferenceClient, InferSession, PreparedRequest } from "./types.ts";
import type { InferRequest, Tensor } from "../types/tensor.ts";
import type { ModelInfo, ServerInfo } from "../types/model.ts";

/** The input of perf_analyzer's TorchServe input data: the name of the file to send. */
export const TORCHSERVE_INPUT = "TORCHSERVE_INPUT";
/** The output decoded responses carry: the response body. */
export const TORCHSERVE_OUTPUT = "response";

/** "host:port" or "http(s)://host:port[/base/path]", -H fields, timeouts, TLS. */
export type TorchServeClientOptions = HttpClientOptions;

const decoder = new TextDecoder();

/** The output of an answer: its body as one BYTES element. */
const decodeBody = (body: Uint8Array): Tensor[] => [{
  name: TORCHSERVE_OUTPUT,
  datatype: "BYTES",
  shape: [1],
  data: encodeBytesElements([body]),
}];

export class TorchServeClient implements InferenceClient {
  readonly protocol = "http" as const;
  readonly #target: HttpTarget;
  readonly #sessions: HttpSessions;

  constructor(options: TorchServeClientOptions) {
    this.#target = new HttpTarget(options);
    this.#sessions = new HttpSessions(this.#target.endpoint, "a TorchServe client");
  }

  /** TorchServe's inference API has no server metadata. */
  serverInfo(): Promise<ServerInfo> {
    return Promise.resolve({ name: "torchserve", version: "", extensions: [] });
  }

  /** Requests carry one file: one BYTES input naming it, the body of the response as output. */
  modelInfo(model: string, version: string): Promise<ModelInfo> {
    return Promise.resolve(fixedModelInfo(model, version, {
      platform: "torchserve",
      inputs: [{ name: TORCHSERVE_INPUT, datatype: "BYTES", dims: [1] }],
      outputs: [],
    }));
  }

  /** Reads the file named by the request's TORCHSERVE_INPUT (once) as the body. */
  prepare(request: InferRequest, target: { model: string; version: string }): PreparedRequest {
    const input = request.inputs.find((t) => t.name === TORCHSERVE_INPUT);
    const [name] = input === undefined ? [] : decodeBytesElements(input.data);
    if (name === undefined) {
      throw new InputError(
        `TorchServe requests need input data naming the file to send: --input-data FILE.json ` +
          `with {"data": [{"${TORCHSERVE_INPUT}": ["file.jpg"]}]}`,
      );
    }
    const file = decoder.decode(name);
    let body: Uint8Array;
    try {
      body = Deno.readFileSync(file);
    } catch (error) {
      throw new InputError(
        `Cannot read "${file}", the file ${TORCHSERVE_INPUT} names (paths are relative to the ` +
          `working directory): ${(error as Error).message}`,
      );
    }
    const version = target.version === "" ? "" : `/${encodeURIComponent(target.version)}`;
    const model = encodeURIComponent(target.model);
    const path = `${this.#target.basePath}/predictions/${model}${version}`;
    const headers = { "Content-Type": "application/octet-stream" };
    return new PreparedHttpRequest(this.#target.post(path, { headers, body }), decodeBody);
  }

  openSession(): Promise<InferSession> {
    return this.#sessions.open();
  }

  close(): Promise<void> {
    this.#sessions.closeAll();
    return Promise.resolve();
  }
}
