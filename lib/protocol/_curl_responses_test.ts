import assert from "node:assert/strict";
import { decodeBytesElements } from "../input/codec.ts";
import { CURL_MAX_WRITE_SIZE, CurlResponses, wholeCharacters } from "./_curl_responses.ts";
import type { OutputTensors } from "./types.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The responses recorded of `pieces` (each read at its index as time), as [time, text]. */
function record(pieces: (string | Uint8Array)[], endMs = 99): [number, string][] {
  const got: [number, string][] = [];
  const responses = new CurlResponses("response");
  responses.begin((outputs: OutputTensors, atMs) => {
    assert.equal(outputs[0].name, "response");
    const elements = decodeBytesElements(outputs[0].data);
    assert.equal(elements.length, 1);
    got.push([atMs, decoder.decode(elements[0])]);
  });
  pieces.forEach((piece, i) =>
    responses.piece(typeof piece === "string" ? encoder.encode(piece) : piece, i)
  );
  responses.end(endMs);
  return got;
}

Deno.test("each piece is a response with its bytes as they came, comments and fields included", () => {
  const pieces = [
    'event: message\nid: 1\ndata: {"a":\ndata: 1}\n\n: comment\n\n',
    "data: {}\n\ndata: ",
    "[DONE]\n\n",
  ];
  // "data: [DONE]" never fell in one piece: perf_analyzer ends at the transfer, with "".
  assert.deepEqual(record(pieces), [[0, pieces[0]], [1, pieces[1]], [2, pieces[2]], [99, ""]]);
});

Deno.test("the piece holding data: [DONE] is the last; a body without a piece is one empty response", () => {
  assert.deepEqual(record(["data: {}\n\ndata: [DONE]\n\n", "data: {}\n\n"]), [
    [0, "data: {}\n\ndata: [DONE]\n\n"],
  ]);
  assert.deepEqual(record([]), [[99, ""]]);
});

Deno.test("a piece beyond curl's write size is handed over in parts of that size", () => {
  const big = `data: {"x":"${"y".repeat(CURL_MAX_WRITE_SIZE * 2)}"}\n\ndata: [DONE]\n\n`;
  const got = record([big]);
  assert.deepEqual(got.map(([, text]) => text.length), [
    CURL_MAX_WRITE_SIZE,
    CURL_MAX_WRITE_SIZE,
    big.length - 2 * CURL_MAX_WRITE_SIZE,
  ]);
  assert.equal(got.map(([, text]) => text).join(""), big);
});

Deno.test("a character cut by a read drops out of both pieces, as genai-perf reads perf_analyzer's file", () => {
  const bytes = encoder.encode("aé€😀b");
  for (let cut = 0; cut <= bytes.length; cut++) {
    const left = decoder.decode(wholeCharacters(bytes.subarray(0, cut)));
    const right = decoder.decode(wholeCharacters(bytes.subarray(cut)));
    // Python's bytes.decode("utf-8", errors="ignore") of each half.
    const whole = [..."aé€😀b"];
    let at = 0;
    const kept = whole.filter((ch) => {
      const from = at;
      at += encoder.encode(ch).length;
      return at <= cut || from >= cut;
    });
    assert.equal(left + right, kept.join(""), `cut at byte ${cut}`);
    assert.ok(!`${left}${right}`.includes("\ufffd"));
  }
  const plain = encoder.encode("plain");
  assert.equal(wholeCharacters(plain), plain, "whole text is not copied");
});
