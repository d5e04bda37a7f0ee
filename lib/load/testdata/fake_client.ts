/** A test client for the loads: answers after a delay and keeps what it was sent. */
import assert from "node:assert/strict";
import type { InferenceClient, InferSession, PreparedRequest } from "../../protocol/types.ts";
import type { InferRequest } from "../../types/tensor.ts";
import type { RequestTiming } from "../../types/timing.ts";

/** A prepared request that remembers its parameters, so tests can read the sequence flags. */
export interface FakeRequest extends PreparedRequest {
  parameters: InferRequest["parameters"];
}

/**
 * Answers every request after `latencyMs` (or what it says for the request);
 * counts sessions and the most requests in flight.
 */
export class FakeClient implements Pick<InferenceClient, "openSession" | "prepare"> {
  sessions = 0;
  inflight = 0;
  maxInflight = 0;
  sent: FakeRequest[] = [];
  /** When each request of `sent` was sent (performance.now()). */
  sentMs: number[] = [];
  /** How long opening a session takes; failing: it fails instead. */
  connect = { ms: 0, failing: false };
  constructor(readonly latencyMs: number | ((request: FakeRequest) => number)) {}

  prepare(request: InferRequest): PreparedRequest {
    return { byteLength: 0, parameters: request.parameters } as FakeRequest;
  }

  async openSession(): Promise<InferSession> {
    this.sessions++;
    let busy = false;
    if (this.connect.ms > 0) await new Promise((r) => setTimeout(r, this.connect.ms));
    if (this.connect.failing) throw new Error("connection refused");
    return {
      infer: async (request: PreparedRequest, timing: RequestTiming) => {
        assert.ok(!busy, "one request at a time per session");
        busy = true;
        const fake = request as FakeRequest;
        this.sent.push(fake);
        this.maxInflight = Math.max(this.maxInflight, ++this.inflight);
        timing.start = timing.sendEnd = performance.now();
        this.sentMs.push(timing.start);
        const latencyMs = typeof this.latencyMs === "number"
          ? this.latencyMs
          : this.latencyMs(fake);
        await new Promise((r) => setTimeout(r, latencyMs));
        timing.recvStart = timing.end = performance.now();
        timing.responses = 1;
        this.inflight--;
        busy = false;
        return undefined;
      },
      close: () => {},
    };
  }
}
