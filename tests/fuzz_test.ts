/**
 * Property-based fuzzing of every parser that reads text or bytes from a user
 * or a server: whatever arrives, the parser returns or rejects with its own
 * error class and a one-line message; it never throws anything else.
 *
 * FUZZ_RUNS sets the cases per property (default 300, a few seconds in CI);
 * `deno task fuzz` runs a long budget.
 */
import assert from "node:assert/strict";
import { concatBytes } from "../lib/input/codec.ts";
import fc from "fast-check";
import { parseJsonData } from "../lib/input/json_data.ts";
import { InputError } from "../lib/input/errors.ts";
import type { DataModel } from "../lib/input/data_set.ts";
import { UsageError } from "../lib/types/errors.ts";
import { parseConfigYaml } from "../lib/cli/yaml.ts";
import { ConfigSyntaxError, parseModelConfig } from "../lib/protocol/model_config.ts";
import { parseRange } from "../lib/load/range.ts";
import { parseIntervals } from "../lib/load/schedule.ts";
import { ConnectionError, ProtocolError } from "../lib/protocol/errors.ts";
import { type ByteSource, ResponseReader } from "../lib/protocol/http1/_response_reader.ts";
import { SseParser } from "../lib/protocol/sse.ts";
import { ErrorCode, Http2Error, Http2Session } from "../lib/protocol/grpc/http2.ts";
import {
  readStreamResponse,
  type StreamResponse,
  Walker,
} from "../lib/protocol/grpc/_stream_response.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 300);
const params = { numRuns: RUNS };
const encoder = new TextEncoder();

// deno-lint-ignore no-explicit-any
type ErrorClass = new (...args: any[]) => Error;

/** Runs `fn`; an error must be one of `classes`, with a one-line message. */
function rejectsCleanly(fn: () => unknown, classes: ErrorClass[]): void {
  try {
    fn();
  } catch (error) {
    assertClean(error, classes);
  }
}

async function rejectsCleanlyAsync(fn: () => Promise<unknown>, classes: ErrorClass[]) {
  try {
    await fn();
  } catch (error) {
    assertClean(error, classes);
  }
}

function assertClean(error: unknown, classes: ErrorClass[]): void {
  assert.ok(
    classes.some((c) => error instanceof c),
    `unexpected ${(error as Error)?.name}: ${(error as Error)?.message}\n${
      (error as Error)?.stack
    }`,
  );
  const lines = error instanceof UsageError ? error.errors : [(error as Error).message];
  for (const line of lines) assert.ok(!line.includes("\n"), `one line: ${JSON.stringify(line)}`);
}

/** Text that is often almost valid: random JSON values, their text cut or spliced. */
function mangled(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    valid,
    fc.tuple(valid, fc.nat()).map(([text, n]) => text.slice(0, n % (text.length + 1))),
    fc.tuple(valid, fc.nat(), fc.string()).map(([text, n, junk]) => {
      const at = n % (text.length + 1);
      return text.slice(0, at) + junk + text.slice(at);
    }),
    fc.string({ unit: "binary" }),
  );
}

const PAIR: DataModel = {
  name: "pair",
  inputs: [
    { name: "INPUT0", datatype: "INT32", dims: [4] },
    { name: "TEXT", datatype: "BYTES", dims: [-1] },
  ],
  outputs: [{ name: "OUTPUT0", datatype: "FP16", dims: [2, 2] }],
};

const tensorValue = fc.oneof(
  fc.array(fc.oneof(fc.integer(), fc.double(), fc.string(), fc.boolean()), { maxLength: 20 }),
  fc.record({ content: fc.anything(), shape: fc.array(fc.integer({ min: -2, max: 8 })) }),
  fc.record({ b64: fc.oneof(fc.base64String(), fc.string()) }),
  fc.anything(),
);
const step = fc.dictionary(
  fc.constantFrom("INPUT0", "TEXT", "OUTPUT0", "OTHER", "timestamp"),
  tensorValue,
);
const dataJson = fc.oneof(
  fc.record({ data: fc.array(step, { maxLength: 4 }) }),
  fc.record({
    data: fc.array(fc.array(step, { maxLength: 3 }), { maxLength: 3 }),
    validation_data: fc.array(step, { maxLength: 3 }),
  }),
  fc.anything(),
).map((value) => JSON.stringify(value) ?? "null");

Deno.test("fuzz: JSON input data is parsed or refused with a one-line InputError", () => {
  fc.assert(
    fc.property(mangled(dataJson), (text) => {
      rejectsCleanly(
        () => parseJsonData(text, { model: PAIR, shapes: new Map(), source: "d.json" }),
        [InputError],
      );
    }),
    params,
  );
});

const yamlText = fc.oneof(
  fc.dictionary(
    fc.constantFrom(
      "model-name",
      "concurrency-range",
      "batch-size",
      "measurement-interval",
      "async",
      "header",
      "constraints",
      "unknown_key",
      "percentile",
    ),
    fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.record({ start: fc.integer(), stop: fc.integer(), step: fc.integer() }),
      fc.constant(null),
    ),
  ).map((entries) =>
    Object.entries(entries).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join("\n")
  ),
  fc.string(),
);

Deno.test("fuzz: YAML config is parsed or refused with one-line UsageErrors", () => {
  fc.assert(
    fc.property(mangled(yamlText), fc.constantFrom("profile", "serve", "report"), (text, cmd) => {
      rejectsCleanly(
        () => parseConfigYaml(text, { file: "c.yaml", command: cmd as "profile" }),
        [UsageError],
      );
    }),
    params,
  );
});

/** config.pbtxt texts: the fixtures' and pieces of the text format. */
const pbtxtText = fc.oneof(
  fc.constantFrom(
    ...[...Deno.readDirSync(new URL("../fixtures/triton/models/", import.meta.url))].map((e) =>
      Deno.readTextFileSync(
        new URL(`../fixtures/triton/models/${e.name}/config.pbtxt`, import.meta.url),
      )
    ),
  ),
  fc.array(
    fc.constantFrom(
      "name:",
      '"m"',
      "max_batch_size",
      ":",
      "8",
      "-1.5e3",
      "0x1F",
      "{",
      "}",
      "[",
      "]",
      "<",
      ">",
      ",",
      ";",
      "input",
      "dims: [4, 2]",
      "data_type: TYPE_FP32",
      "instance_group [{ count: 2 kind: KIND_CPU }]",
      'parameters { key: "k" value { string_value: "v" } }',
      "dynamic_batching { }",
      "sequence_batching { }",
      "unknown_field { a: 1 }",
      "# comment\n",
      "'\\x41\\101'",
      "\n",
    ),
    { maxLength: 30 },
  ).map((parts) => parts.join(" ")),
);

Deno.test("fuzz: config.pbtxt is read or refused with a one-line ConfigSyntaxError", () => {
  fc.assert(
    fc.property(mangled(pbtxtText), (text) => {
      rejectsCleanly(() => parseModelConfig(text, "m/config.pbtxt"), [ConfigSyntaxError]);
    }),
    params,
  );
});

Deno.test("fuzz: intervals files and ranges are parsed or refused with a RangeError", () => {
  const intervals = fc.array(
    fc.oneof(fc.nat().map(String), fc.double().map(String), fc.string()),
    { maxLength: 8 },
  ).map((lines) => lines.join(fc.sample(fc.constantFrom("\n", "\r\n"), 1)[0]));
  fc.assert(
    fc.property(mangled(intervals), (text) => {
      rejectsCleanly(() => {
        const parsed = parseIntervals(text, "i.txt");
        assert.ok(parsed.every((us) => Number.isFinite(us) && us >= 0));
      }, [RangeError]);
    }),
    params,
  );
  const range = fc.array(fc.oneof(fc.nat().map(String), fc.double().map(String), fc.string()), {
    minLength: 1,
    maxLength: 4,
  }).map((parts) => parts.join(":"));
  fc.assert(
    fc.property(mangled(range), fc.boolean(), (text, integer) => {
      rejectsCleanly(() => {
        const r = parseRange(text, { integer });
        // An end below the start is kept (perf_analyzer measures the start alone).
        assert.ok(r.start > 0 && r.step > 0 && r.end >= 0);
      }, [RangeError]);
    }),
    params,
  );
});

/** Serves `data` in the given piece sizes, then end of stream. */
class PieceSource implements ByteSource {
  #at = 0;
  #piece = 0;
  constructor(readonly data: Uint8Array, readonly pieces: number[]) {}
  read(p: Uint8Array): Promise<number | null> {
    if (this.#at >= this.data.length) return Promise.resolve(null);
    const size = Math.max(1, this.pieces[this.#piece++ % this.pieces.length] ?? 1);
    const n = Math.min(size, p.length, this.data.length - this.#at);
    p.set(this.data.subarray(this.#at, this.#at + n));
    this.#at += n;
    return Promise.resolve(n);
  }
}

const httpResponse = fc.record({
  status: fc.oneof(fc.integer({ min: 100, max: 599 }).map(String), fc.string()),
  headers: fc.array(
    fc.tuple(
      fc.constantFrom(
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Content-Type",
        "Inference-Header-Content-Length",
        "X-Other",
      ),
      fc.oneof(
        fc.nat().map(String),
        fc.constantFrom("chunked", "close", "gzip, chunked"),
        fc.string(),
      ),
    ),
    { maxLength: 5 },
  ),
  body: fc.oneof(
    fc.string(),
    fc.array(fc.tuple(fc.nat({ max: 40 }), fc.string()), { maxLength: 3 }).map((chunks) =>
      chunks.map(([n, s]) => `${n.toString(16)}\r\n${s}\r\n`).join("") + "0\r\n\r\n"
    ),
  ),
}).map(({ status, headers, body }) =>
  `HTTP/1.1 ${status} X\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`
);

Deno.test("fuzz: HTTP/1.1 responses are read or refused with a protocol or connection error", async () => {
  await fc.assert(
    fc.asyncProperty(
      mangled(httpResponse),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }),
      async (text, pieces) => {
        const reader = new ResponseReader(new PieceSource(encoder.encode(text), pieces), "h:1");
        await rejectsCleanlyAsync(async () => {
          for (let i = 0; i < 3; i++) {
            await reader.readHead();
            await reader.readBody();
          }
        }, [ProtocolError, ConnectionError]);
      },
    ),
    params,
  );
});

const sseText = fc.array(
  fc.oneof(
    fc.string().map((s) => `data: ${s}`),
    fc.string().map((s) => `event: ${s}`),
    fc.string().map((s) => `: ${s}`),
    fc.constant(""),
    fc.constant("data: [DONE]"),
    fc.string(),
  ),
  { maxLength: 10 },
).map((lines) => lines.join(fc.sample(fc.constantFrom("\n", "\r\n", "\r"), 1)[0]));

Deno.test("fuzz: SSE gives the same events however the bytes are split", () => {
  fc.assert(
    fc.property(mangled(sseText), fc.array(fc.nat()), (text, cuts) => {
      const bytes = encoder.encode(text);
      const events = (pieces: Uint8Array[]) => {
        const got: string[] = [];
        const parser = new SseParser((data, type) => got.push(`${type}:${data}`));
        for (const piece of pieces) parser.push(piece);
        return got;
      };
      const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const pieces = [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length));
      rejectsCleanly(() => assert.deepEqual(events(pieces), events([bytes])), [ProtocolError]);
    }),
    params,
  );
});

/** An HTTP/2 frame: 9-byte header and payload. */
const frame = fc.record({
  type: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 255 })),
  flags: fc.integer({ min: 0, max: 255 }),
  stream: fc.oneof(fc.constantFrom(0, 1, 3), fc.integer({ min: 0, max: 2 ** 31 - 1 })),
  payload: fc.uint8Array({ maxLength: 80 }),
  length: fc.option(fc.integer({ min: 0, max: 2 ** 24 - 1 }), { freq: 8 }),
}).map(({ type, flags, stream, payload, length }) => {
  const n = length ?? payload.length;
  const out = new Uint8Array(9 + payload.length);
  out.set([n >>> 16, (n >>> 8) & 255, n & 255, type, flags], 0);
  new DataView(out.buffer).setUint32(5, stream);
  out.set(payload, 9);
  return out;
});

Deno.test("fuzz: an HTTP/2 client session fails random frames as protocol errors, never as bugs", () => {
  fc.assert(
    fc.property(fc.array(frame, { maxLength: 12 }), fc.nat({ max: 20 }), (frames, piece) => {
      let closedWith: Error | undefined;
      const session = new Http2Session({ write: () => Promise.resolve(), close() {} }, {
        role: "client",
        onClose: (error) => closedWith = error,
      });
      const reset: Error[] = [];
      session.request(
        {
          headers() {},
          data() {},
          reset: (_s, error) => reset.push(error),
        },
        encoder.encode(""),
        false,
      );
      // The server's SETTINGS first, so later frames reach the stream logic.
      const wire = concatBytes([new Uint8Array([0, 0, 0, 4, 0, 0, 0, 0, 0]), ...frames]);
      const size = piece + 1;
      for (let i = 0; i < wire.length; i += size) session.receive(wire.subarray(i, i + size));
      session.transportClosed();
      for (const error of [closedWith, ...reset]) {
        if (error === undefined) continue;
        assert.ok(
          !(error instanceof Http2Error && error.code === ErrorCode.INTERNAL_ERROR),
          `a bug surfaced as INTERNAL_ERROR: ${error.message}`,
        );
        assert.ok(!error.message.includes("\n"));
      }
    }),
    params,
  );
});

Deno.test("fuzz: gRPC stream responses are read or refused with a ProtocolError", () => {
  const walker = new Walker();
  const out: StreamResponse = { error: "", hasOutputs: false, final: undefined, infer: undefined };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      rejectsCleanly(() => readStreamResponse(bytes, walker, out), [ProtocolError]);
    }),
    params,
  );
});
