import assert from "node:assert/strict";
import { concatBytes } from "../../input/codec.ts";
import { ProtocolError } from "../errors.ts";
import { decodeMessage, encodeMessage, type Fields, Messages } from "./messages.ts";
import { readStreamResponse, type StreamResponse, Walker } from "./_stream_response.ts";
import { frameMessage, MessageReader } from "./wire.ts";

/**
 * A ModelStreamInferResponse as the real Triton server (identity backend,
 * model "id10") sent it: the backend adds response parameters of every kind
 * (string, int64, bool, double) beside triton_final_response.
 */
const TRITON_STREAM_RESPONSE = hex(
  "12d7010a0469643130120131221b0a15747269746f6e5f66696e616c5f726573706f6e73651202080122270a06" +
    "706172616d30121d1a1b616e206578616d706c6520737472696e6720706172616d65746572220c0a0670617261" +
    "6d3212020800220c0a06706172616d311202102a22130a06706172616d331209211d5a643bdfc75e402a130a07" +
    "4f5554505554301204465033321a02011032409808253e240f643ed052ae3dde99523fceaaff3e0035c63e6d13" +
    "0a3f4d72713fbaee4a3f92cfe03e603e243d7cb8353f7ce5b33ebc76553fc5543e3f89460f3f",
);

function hex(text: string): Uint8Array {
  return new Uint8Array(text.match(/../g)!.map((pair) => parseInt(pair, 16)));
}

function read(message: Uint8Array): StreamResponse {
  const out: StreamResponse = { error: "", hasOutputs: false, final: undefined, infer: undefined };
  readStreamResponse(message, new Walker(), out);
  return out;
}

function streamResponse(fields: Fields): Uint8Array {
  return encodeMessage(Messages.ModelStreamInferResponse, fields);
}

const OUTPUT = {
  outputs: [{ name: "OUTPUT0", datatype: "INT32", shape: [2] }],
  raw_output_contents: [Uint8Array.of(1, 0, 0, 0, 2, 0, 0, 0)],
};

Deno.test("a real Triton stream response with parameters of every kind is read", () => {
  const response = read(TRITON_STREAM_RESPONSE);
  assert.equal(response.error, "");
  assert.equal(response.hasOutputs, true);
  assert.equal(response.final, true);
  const infer = decodeMessage(Messages.ModelInferResponse, response.infer!);
  assert.equal(infer.model_name, "id10");
  assert.equal(infer.parameters.param0.string_param, "an example string parameter");
  assert.equal(infer.parameters.param1.int64_param, 42);
  assert.equal(infer.parameters.param3.double_param, 123.123);
});

Deno.test("stream responses: every parameter type, before and after the final flag", () => {
  const other = {
    s: { string_param: "x".repeat(300) },
    i: { int64_param: -5 },
    u: { uint64_param: 2 ** 40 },
    d: { double_param: 0.5 },
    b: { bool_param: true },
  };
  const cases: [string, Fields, Partial<StreamResponse>][] = [
    ["final true among others", {
      infer_response: {
        model_name: "m",
        parameters: { ...other, triton_final_response: { bool_param: true } },
        ...OUTPUT,
      },
    }, { hasOutputs: true, final: true }],
    ["final false", {
      infer_response: { parameters: { triton_final_response: { bool_param: false }, ...other } },
    }, { hasOutputs: false, final: false }],
    ["no final flag", { infer_response: { id: "7", parameters: other, ...OUTPUT } }, {
      hasOutputs: true,
      final: undefined,
    }],
    ["empty final response", {
      infer_response: { parameters: { triton_final_response: { bool_param: true } } },
    }, { hasOutputs: false, final: true }],
    ["an error", { error_message: "in 'm': bad input" }, { error: "in 'm': bad input" }],
    ["nothing", {}, { hasOutputs: false, final: undefined, infer: undefined }],
  ];
  for (const [name, fields, expected] of cases) {
    const got = read(streamResponse(fields));
    for (const [key, value] of Object.entries(expected)) {
      assert.deepEqual(got[key as keyof StreamResponse], value, `${name}: ${key}`);
    }
  }
});

Deno.test("a stream response cut short anywhere is a protocol error, never a wrong read", () => {
  const walker = new Walker();
  const out: StreamResponse = { error: "", hasOutputs: false, final: undefined, infer: undefined };
  for (let end = 1; end < TRITON_STREAM_RESPONSE.length; end++) {
    assert.throws(
      () => readStreamResponse(TRITON_STREAM_RESPONSE.subarray(0, end), walker, out),
      ProtocolError,
      `cut at ${end}`,
    );
  }
});

Deno.test("skipped fields of every wire type land on the next field", () => {
  // field 9 varint, field 10 fixed64, field 11 bytes, field 12 fixed32, then error_message.
  const message = Uint8Array.of(
    0x48,
    0x96,
    0x01,
    0x51,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    0x5a,
    0x02,
    0xaa,
    0xbb,
    0x65,
    1,
    2,
    3,
    4,
    0x0a,
    0x02,
    0x68,
    0x69,
  ); // deno-fmt-ignore
  assert.equal(read(message).error, "hi");
});

Deno.test("stream framing: every split of real responses across DATA frames reads the same", () => {
  const messages = [
    TRITON_STREAM_RESPONSE,
    streamResponse({
      infer_response: { parameters: { triton_final_response: { bool_param: true } } },
    }),
    streamResponse({
      infer_response: { ...OUTPUT, raw_output_contents: [new Uint8Array(40_000)] },
    }),
    new Uint8Array(0),
  ];
  const wire = concatBytes(messages.map((message) => frameMessage(message, false)));
  const expected = messages.map(summary);
  const check = (frames: Uint8Array[], label: string) => {
    const got: string[] = [];
    const reader = new MessageReader((message) => got.push(summary(message)));
    for (const frame of frames) reader.push(frame);
    assert.deepEqual(got, expected, label);
    assert.equal(reader.idle, true, label);
  };
  // One cut at every byte: a length prefix split from its body, a body split anywhere.
  for (let cut = 0; cut <= wire.length; cut++) {
    check([wire.subarray(0, cut), wire.subarray(cut)], `cut at ${cut}`);
  }
  // Many small frames with empty ones between, and everything in one frame.
  for (const size of [1, 2, 3, 5, 7, 16_384]) {
    const frames: Uint8Array[] = [];
    for (let at = 0; at < wire.length; at += size) {
      frames.push(wire.subarray(at, at + size), new Uint8Array(0));
    }
    check(frames, `frames of ${size}`);
  }
  check([wire], "one frame");
  // Two cuts at random places (seeded), a few hundred times.
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 300; i++) {
    const [a, b] = [next(wire.length), next(wire.length)].sort((x, y) => x - y);
    check([wire.subarray(0, a), wire.subarray(a, b), wire.subarray(b)], `cuts at ${a}, ${b}`);
  }
});

Deno.test("stream framing: with a head limit, large responses are read from their head alike", () => {
  const large = streamResponse({
    infer_response: {
      model_name: "m",
      parameters: { triton_final_response: { bool_param: false } },
      ...OUTPUT,
      raw_output_contents: [new Uint8Array(200_000).fill(9)],
    },
  });
  const messages = [TRITON_STREAM_RESPONSE, large, streamResponse({ error_message: "e" }), large];
  const wire = concatBytes(messages.map((message) => frameMessage(message, false)));
  const expected = messages.map((m) => summary(m).replace(/^\d+:/, ""));
  for (const size of [1, 7, 1000, 16_384, wire.length]) {
    const got: string[] = [];
    const lengths: number[] = [];
    const reader = new MessageReader((message, _compressed, truncated) => {
      const out: StreamResponse = {
        error: "",
        hasOutputs: false,
        final: undefined,
        infer: undefined,
      };
      readStreamResponse(message, new Walker(), out, truncated);
      got.push(`${out.hasOutputs}:${out.final}:${out.error}`);
      lengths.push(message.length);
    });
    reader.headLimit = 1000;
    for (let at = 0; at < wire.length; at += size) reader.push(wire.subarray(at, at + size));
    assert.deepEqual(got, expected, `frames of ${size}`);
    // Small responses stay whole; of a large one split over frames only the head is kept (one
    // that arrives in a single frame is passed on as a view, with nothing to copy).
    const head = size === wire.length ? large.length : 1000;
    assert.deepEqual(lengths, [TRITON_STREAM_RESPONSE.length, head, messages[2].length, head]);
    assert.equal(reader.idle, true);
  }
  // Compressed messages are only readable whole: never cut.
  const packed: Uint8Array[] = [];
  const reader = new MessageReader((message) => packed.push(message.slice()));
  reader.headLimit = 10;
  reader.push(frameMessage(large, true).subarray(0, 100));
  reader.push(frameMessage(large, true).subarray(100));
  assert.deepEqual(packed, [large]);
});

function summary(message: Uint8Array): string {
  if (message.length === 0) return "empty";
  const response = read(message);
  return `${message.length}:${response.hasOutputs}:${response.final}:${response.error}`;
}
