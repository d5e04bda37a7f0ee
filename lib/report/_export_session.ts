/**
 * What the profile export sees of each request through the client it wraps:
 * per load slot, the request sent, each response's time and outputs; and
 * what crosses from --workers threads.
 */
import type {
  InferenceClient,
  InferOptions,
  InferSession,
  OutputTensors,
  PreparedRequest,
} from "../protocol/types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { RequestSink, RequestTiming } from "../types/timing.ts";

/**
 * What a load slot (one timing object) last sent and received. Allocated
 * once per slot and refilled for every request.
 */
export class SlotDetail {
  request: PreparedRequest | undefined;
  outputs: OutputTensors | undefined;
  /** `timing.start` before the call: unchanged after it, the client failed before sending. */
  startBefore = 0;
  /** performance.now() of each response, as the client reports them (decoupled models send several). */
  readonly responsesMs: number[] = [];
  /** Each message of the answer and its outputs, from clients that report them (onOutputs). */
  readonly messagesMs: number[] = [];
  readonly messageOutputs: OutputTensors[] = [];
  /** The load's own per-response callback, called after noting the time. */
  chained: (() => void) | undefined;
  /** Every response is decoded, so that outputs can be exported. */
  readonly options: InferOptions = {
    decodeOutputs: true,
    onResponse: () => {
      this.responsesMs.push(performance.now());
      this.chained?.();
    },
    onOutputs: (outputs, atMs) => {
      this.messagesMs.push(atMs);
      this.messageOutputs.push(outputs);
    },
  };

  /** Ready for the slot's next request. */
  reset(): void {
    this.responsesMs.length = 0;
    this.messagesMs.length = 0;
    this.messageOutputs.length = 0;
  }
}

/** What the client wrapped by wrapClient() saw of a load slot's latest request. */
export interface SeenRequest {
  /** The request as given to prepare(); undefined when another client prepared it. */
  request: InferRequest | undefined;
  /** False when the client failed before sending it. */
  sent: boolean;
  /** performance.now() of each response as the client reported them; none: one, at the timing's end. */
  responsesMs: readonly number[];
  outputs: OutputTensors | undefined;
  /** Each response's outputs, from clients that report them (onOutputs), beside responsesMs. */
  responseOutputs?: readonly OutputTensors[];
}

/** A RequestSink that also sees, through the client it wraps, what each request sent and got. */
export interface RequestTracer extends RequestSink {
  wrapClient<C extends InferenceClient>(client: C): C;
  /** --workers N > 1: what a worker's client saw of the request replayed next with `timing`. */
  noteRemote(timing: RequestTiming, seen: SeenRequest): void;
}

/** A session that notes, per timing object (one per load slot), what was sent and received. */
export class ExportingSession implements InferSession {
  readonly #inner: InferSession;
  readonly #details: WeakMap<RequestTiming, SlotDetail>;

  constructor(inner: InferSession, details: WeakMap<RequestTiming, SlotDetail>) {
    this.#inner = inner;
    this.#details = details;
  }

  async infer(
    request: PreparedRequest,
    timing: RequestTiming,
    options?: InferOptions,
  ): Promise<OutputTensors | undefined> {
    let detail = this.#details.get(timing);
    if (detail === undefined) {
      detail = new SlotDetail();
      this.#details.set(timing, detail);
    }
    detail.request = request;
    detail.reset();
    detail.chained = options?.onResponse;
    detail.startBefore = timing.start;
    detail.outputs = await this.#inner.infer(request, timing, detail.options);
    return detail.outputs;
  }

  close(): void {
    this.#inner.close();
  }
}
