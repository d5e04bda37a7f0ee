/** One HTTP/2 stream of a session (http2.ts): its flow-control state and its handler. */

/** Receives one stream's events. Handlers run synchronously inside receive(). */
export interface StreamHandler {
  /** A complete header block: `fields` is name, value, name, value... valid during the call. */
  headers(stream: Http2Stream, fields: readonly string[], endStream: boolean): void;
  /** A DATA payload (padding removed), valid during the call. */
  data(stream: Http2Stream, data: Uint8Array, endStream: boolean): void;
  /** The stream ended abnormally: reset by the peer, or the connection ended. */
  reset(stream: Http2Stream, error: Error): void;
}

interface PendingData {
  data: Uint8Array;
  offset: number;
  endStream: boolean;
}

export class Http2Stream {
  /** Flow-control credit the peer granted for this stream. */
  sendWindow: number;
  /** Received octets not yet acknowledged with a WINDOW_UPDATE. */
  unacked = 0;
  localClosed = false;
  remoteClosed = false;
  /** DATA waiting for flow-control credit, in order. */
  pending: PendingData[] = [];

  constructor(readonly id: number, public handler: StreamHandler, sendWindow: number) {
    this.sendWindow = sendWindow;
  }
}
