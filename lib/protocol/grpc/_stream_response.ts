/**
 * ModelStreamInferResponse read without decoding its tensors: a stream's
 * responses are only counted and checked for errors and the final flag, so
 * walking the protobuf fields by hand saves a full decode per response.
 */
import { ProtocolError } from "../errors.ts";

/**
 * ModelStreamInferResponse read without decoding tensors: the error message,
 * whether it carries a response with outputs, and triton_final_response.
 */
export interface StreamResponse {
  error: string;
  /** An infer_response with outputs (an empty final response has none). */
  hasOutputs: boolean;
  /** triton_final_response, undefined when the server did not send it. */
  final: boolean | undefined;
  /** The infer_response bytes (a view). */
  infer: Uint8Array | undefined;
}

const decoder = new TextDecoder();
const FINAL_KEY = new TextEncoder().encode("triton_final_response");

/** Minimal protobuf walking: varints and length-delimited fields, other wire types skipped. */
export class Walker {
  pos = 0;
  end = 0;
  /** Length of the field nextDelimited() stopped at. */
  length = 0;
  bytes: Uint8Array = new Uint8Array(0);
  /** The bytes are a message's head (MessageReader.headLimit): a field may run past the end. */
  truncated = false;

  reset(bytes: Uint8Array, start = 0, end = bytes.length): void {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  varint(): number {
    let value = 0;
    let factor = 1;
    for (;;) {
      if (this.pos >= this.end) throw new ProtocolError("Truncated protobuf message");
      const byte = this.bytes[this.pos++];
      value += (byte & 0x7f) * factor;
      if (byte < 0x80) return value;
      factor *= 128;
    }
  }

  /** Skips a field of `wireType`; a field that runs past the end is a truncated message. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.#advance(8);
        return;
      case 2: {
        // Read the length before adding: `this.pos += this.varint()` would add
        // it to the position before the length's own bytes.
        const length = this.varint();
        this.#advance(length);
        return;
      }
      case 5:
        this.#advance(4);
        return;
      default:
        throw new ProtocolError(`Unsupported protobuf wire type ${wireType}`);
    }
  }

  #advance(bytes: number): void {
    if (this.pos + bytes > this.end) throw new ProtocolError("Truncated protobuf message");
    this.pos += bytes;
  }

  /**
   * Moves to the value of the next length-delimited field, skipping other
   * fields: its field number (its size in `length`), or -1 at the end.
   */
  nextDelimited(): number {
    while (this.pos < this.end) {
      const key = this.varint();
      const wire = key & 7;
      if (wire === 2) {
        this.length = this.varint();
        if (this.pos + this.length > this.end) {
          if (!this.truncated) throw new ProtocolError("Truncated protobuf message");
          this.length = this.end - this.pos;
        }
        return Math.floor(key / 8);
      }
      this.skip(wire);
    }
    return -1;
  }
}

function sameBytes(bytes: Uint8Array, start: number, end: number, expected: Uint8Array): boolean {
  if (end - start !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[start + i] !== expected[i]) return false;
  return true;
}

/**
 * Reads a ModelStreamInferResponse into `out` (reused); `w` is a scratch
 * walker. `truncated`: the message's head only, cut inside its output tensors
 * (which servers write after the parameters and output descriptions).
 */
export function readStreamResponse(
  message: Uint8Array,
  w: Walker,
  out: StreamResponse,
  truncated = false,
): void {
  out.error = "";
  out.hasOutputs = false;
  out.final = undefined;
  out.infer = undefined;
  w.truncated = truncated;
  w.reset(message);
  let inferStart = -1;
  let inferEnd = -1;
  for (let field = w.nextDelimited(); field >= 0; field = w.nextDelimited()) {
    if (field === 1) out.error = decoder.decode(message.subarray(w.pos, w.pos + w.length));
    else if (field === 2) {
      inferStart = w.pos;
      inferEnd = w.pos + w.length;
    }
    w.pos += w.length;
  }
  if (inferStart < 0) return;
  out.infer = message.subarray(inferStart, inferEnd);
  // ModelInferResponse: parameters (4) map entries, outputs (5), raw_output_contents (6).
  w.reset(message, inferStart, inferEnd);
  for (let field = w.nextDelimited(); field >= 0; field = w.nextDelimited()) {
    if (field === 5 || field === 6) out.hasOutputs = true;
    else if (field === 4) {
      const final = readFinalFlag(message, w.pos, w.pos + w.length);
      if (final !== undefined) out.final = final;
    }
    w.pos += w.length;
  }
}

/** Scratch walkers of readFinalFlag: responses are read one at a time, synchronously. */
const ENTRY = new Walker();
const PARAMETER = new Walker();

/** A parameters map entry: the bool value when its key is triton_final_response. */
function readFinalFlag(message: Uint8Array, start: number, end: number): boolean | undefined {
  const w = ENTRY;
  w.reset(message, start, end);
  let isFinalKey = false;
  let value: boolean | undefined;
  for (let field = w.nextDelimited(); field >= 0; field = w.nextDelimited()) {
    if (field === 1) isFinalKey = sameBytes(message, w.pos, w.pos + w.length, FINAL_KEY);
    else if (field === 2) {
      // InferParameter: bool_param is field 1, a varint.
      const inner = PARAMETER;
      inner.reset(message, w.pos, w.pos + w.length);
      while (inner.pos < inner.end) {
        const k = inner.varint();
        if (k === 8) value = inner.varint() !== 0;
        else inner.skip(k & 7);
      }
    }
    w.pos += w.length;
  }
  return isFinalKey ? value ?? false : undefined;
}
