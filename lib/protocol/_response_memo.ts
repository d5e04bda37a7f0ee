/**
 * Decoding of responses that repeat. A load sends the same few requests over
 * and over, and a model usually answers a given request with the same bytes;
 * when outputs are decoded for every response (the profile export, output
 * validation), decoding the same bytes again parses the same JSON or protobuf
 * header and copies the same tensor data each time: about 3.5 µs and three
 * allocations per response of Triton's `simple` model. Comparing the bytes
 * with those of the last response decoded costs a tenth of that.
 */
import { equalBytes } from "../input/codec.ts";
import type { OutputTensors } from "./types.ts";

/**
 * Responses larger than this are always decoded: comparing them byte by byte
 * costs about as much as copying them out.
 */
export const MEMO_MAX_BYTES = 4096;

/**
 * `decode` with its last result reused when the next response has the same
 * bytes and the same `key` (what else besides the bytes decides the result,
 * such as where the JSON header ends). The outputs returned may therefore be
 * the very objects returned for an earlier response: callers only read them.
 */
export function memoizeDecode<H>(
  decode: (bytes: Uint8Array, head: H) => OutputTensors,
  options: { key?: (head: H) => number } = {},
): (bytes: Uint8Array, head: H) => OutputTensors {
  const keyOf = options.key;
  let lastBytes = new Uint8Array(0);
  let lastKey = NaN;
  let lastOutputs: OutputTensors | undefined;
  return (bytes, head) => {
    const key = keyOf === undefined ? 0 : keyOf(head);
    if (lastOutputs !== undefined && key === lastKey && equalBytes(bytes, lastBytes)) {
      return lastOutputs;
    }
    const outputs = decode(bytes, head);
    if (bytes.byteLength <= MEMO_MAX_BYTES) {
      // A copy: the bytes given are usually a view of a buffer that the next read overwrites.
      if (lastBytes.byteLength === bytes.byteLength) lastBytes.set(bytes);
      else lastBytes = bytes.slice();
      lastKey = key;
      lastOutputs = outputs;
    } else {
      lastOutputs = undefined;
    }
    return outputs;
  };
}
