import assert from "node:assert/strict";
import fc from "fast-check";
import type protobuf from "protobufjs/light.js";
import { MODEL_CONFIG_TYPE } from "./grpc/messages.ts";
import {
  type ConfigMessage,
  ConfigSyntaxError,
  type ConfigValue,
  formatModelConfig,
  parseModelConfig,
} from "./model_config.ts";

const MODELS = new URL("../../fixtures/triton/models/", import.meta.url).pathname;

Deno.test("every config.pbtxt of the Triton fixtures reads, and writing it back reads the same", () => {
  let count = 0;
  for (const entry of Deno.readDirSync(MODELS)) {
    const file = `${MODELS}${entry.name}/config.pbtxt`;
    const config = parseModelConfig(Deno.readTextFileSync(file), file);
    // Every model is the identity backend's, or an ensemble of them.
    assert.ok(config.backend === "identity" || config.platform === "ensemble", file);
    assert.deepEqual(parseModelConfig(formatModelConfig(config)), config, file);
    count++;
  }
  assert.ok(count >= 8);
});

Deno.test("a configuration reads as protobuf's JSON form: enums by name, maps as objects", () => {
  const cases: Array<[string, ConfigMessage]> = [
    [
      Deno.readTextFileSync(`${MODELS}slow/config.pbtxt`),
      {
        backend: "identity",
        max_batch_size: 0,
        input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: [16] }],
        output: [{ name: "OUTPUT0", data_type: "TYPE_FP32", dims: [16] }],
        instance_group: [{ kind: "KIND_CPU", count: 1 }],
        parameters: { execute_delay_ms: { string_value: "10" } },
      },
    ],
    [
      Deno.readTextFileSync(`${MODELS}versioned/config.pbtxt`).split("\n").filter((l) =>
        l.startsWith("version")
      ).join("\n"),
      { version_policy: { all: {} } },
    ],
    ["dynamic_batching { }", { dynamic_batching: {} }],
    // Repeated fields given one at a time, lists, `<>` blocks, separators, enum numbers.
    [
      'input { name: "A"; data_type: 11 dims: 1 dims: [2, 3] } input < name: "B", data_type: TYPE_INT8 >',
      {
        input: [{ name: "A", data_type: "TYPE_FP32", dims: [1, 2, 3] }, {
          name: "B",
          data_type: "TYPE_INT8",
        }],
      },
    ],
    // Adjacent strings are one; escapes are bytes of UTF-8.
    [`name: "a" 'b\\n' "\\303\\251\\x41\\"" # comment`, { name: 'ab\né\u0041"' }],
    // A map given entry by entry and as a list; a later key wins.
    [
      'parameters { key: "a" value { string_value: "1" } } parameters [{ key: "b", value: { string_value: "2" } }, { key: "a" value: { string_value: "3" } }]',
      { parameters: { a: { string_value: "3" }, b: { string_value: "2" } } },
    ],
    // Fields proto/ does not declare are kept: numbers, booleans, enum names, strings, messages.
    [
      'optimization { priority: PRIORITY_MAX cuda { graphs: true busy_wait_events: false } input_pinned_memory { enable: true } }\nmodel_warmup [{ name: "w" batch_size: 2 inputs { key: "IN" value { data_type: TYPE_FP32 dims: [4] zero_data: true } } }]\ndefault_model_filename: "model.onnx"\ninstance_group [{ count: 2 kind: KIND_CPU host_policy: "h" }]',
      {
        optimization: {
          priority: "PRIORITY_MAX",
          cuda: { graphs: true, busy_wait_events: false },
          input_pinned_memory: { enable: true },
        },
        model_warmup: [{
          name: "w",
          batch_size: 2,
          inputs: { key: "IN", value: { data_type: "TYPE_FP32", dims: [4], zero_data: true } },
        }],
        default_model_filename: "model.onnx",
        instance_group: [{ count: 2, kind: "KIND_CPU", host_policy: "h" }],
      },
    ],
    [
      "max_batch_size: 0x10 dynamic_batching { max_queue_delay_microseconds: 100 preferred_batch_size: [ 4, 8 ] }",
      {
        max_batch_size: 16,
        dynamic_batching: { max_queue_delay_microseconds: 100, preferred_batch_size: [4, 8] },
      },
    ],
  ];
  // Names of Object.prototype are fields like any other (found by the fuzz test).
  const proto: ConfigMessage = { valueOf: 1 };
  Object.defineProperty(proto, "__proto__", { value: { a: 2 }, enumerable: true });
  cases.push(["valueOf: 1 __proto__ { a: 2 }", proto]);
  for (const [text, expected] of cases) {
    const config = parseModelConfig(text);
    assert.deepEqual(config, expected, text);
    assert.deepEqual(parseModelConfig(formatModelConfig(config)), expected, text);
  }
});

Deno.test("the writer uses Triton's layout", () => {
  assert.equal(
    formatModelConfig({
      name: "m",
      max_batch_size: 4,
      input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: [16] }],
      instance_group: [{ count: 2, kind: "KIND_CPU" }],
      dynamic_batching: {},
      parameters: { execute_delay_ms: { string_value: "10" } },
    }),
    `name: "m"
max_batch_size: 4
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 16 ]
  }
]
instance_group [
  {
    count: 2
    kind: KIND_CPU
  }
]
dynamic_batching { }
parameters [
  {
    key: "execute_delay_ms"
    value {
      string_value: "10"
    }
  }
]
`,
  );
});

Deno.test("a configuration that does not parse names the file, line and column", () => {
  const cases: Array<[string, RegExp]> = [
    ['name: "a', /^m\/config\.pbtxt:1:7: Unterminated string$/],
    [
      "\n  max_batch_size 4",
      /^m\/config\.pbtxt:2:18: Expected ":" or "\{" after field "max_batch_size", found "4"$/,
    ],
    [
      "input [{ data_type: TYPE_FP99 }]",
      /:1:21: Expected one of TYPE_INVALID, .* for field "data_type", found "TYPE_FP99"$/,
    ],
    [
      "max_batch_size: 1\nmax_batch_size: 2",
      /:2:1: Field "max_batch_size" is given more than once$/,
    ],
    [
      "dynamic_batching {}\nsequence_batching {}",
      /:2:1: Field "sequence_batching" and field "dynamic_batching" are both given, of oneof "scheduling_choice"$/,
    ],
    [
      "max_batch_size: 4294967296",
      /:1:17: Integer 4294967296 is out of range for field "max_batch_size" \(int32\)$/,
    ],
    ["max_batch_size: 1.5", /:1:17: Expected an integer for field "max_batch_size", found "1.5"$/],
    ["name: 3", /:1:7: Expected a string for field "name", found "3"$/],
    ['input { name: "a"', /:1:18: Expected "\}" before the end of the file$/],
    ['backend: "x" }', /:1:14: Expected a field name, found "\}"$/],
    ["name: @", /:1:7: Unexpected character "@"$/],
    [
      "max_batch_size: [1]",
      /:1:17: Field "max_batch_size" is not repeated: a list is not allowed$/,
    ],
    ["dims: [1 2]", /:1:10: Expected "," or "\]" in the list of "dims", found "2"$/],
    ['name: "\\q"', /:1:8: Invalid escape "\\q" in string$/],
    ["model_transaction_policy { decoupled: maybe }", /:1:39: Expected true or false/],
  ];
  for (const [text, pattern] of cases) {
    assert.throws(() => parseModelConfig(text, "m/config.pbtxt"), (e) => {
      assert.ok(e instanceof ConfigSyntaxError, text);
      assert.match(e.message, pattern, text);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
});

// --- write -> read is the identity on any configuration the descriptor allows

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 200);
const INTS: Record<string, fc.Arbitrary<number>> = {
  int32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  uint32: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  int64: fc.maxSafeInteger(),
  uint64: fc.maxSafeNat(),
};

function valueArbitrary(field: protobuf.Field, depth: number): fc.Arbitrary<ConfigValue> {
  field.resolve();
  const t = field.resolvedType;
  if (t && "fields" in t) return messageArbitrary(t as protobuf.Type, depth + 1);
  if (t && "values" in t) return fc.constantFrom(...Object.keys((t as protobuf.Enum).values));
  if (field.type === "string" || field.type === "bytes") return fc.string({ unit: "grapheme" });
  if (field.type === "bool") return fc.boolean();
  if (field.type === "float" || field.type === "double") return fc.double();
  return INTS[field.type]!;
}

function messageArbitrary(type: protobuf.Type, depth: number): fc.Arbitrary<ConfigMessage> {
  if (depth > 3) return fc.constant({});
  const record: Record<string, fc.Arbitrary<ConfigValue>> = {};
  for (const field of type.fieldsArray) {
    const value = valueArbitrary(field, depth);
    if (field.map) {
      record[field.name] = fc.dictionary(fc.string(), value, {
        maxKeys: 3,
        noNullPrototype: true,
      }) as fc.Arbitrary<
        ConfigMessage
      >;
    } else record[field.name] = field.repeated ? fc.array(value, { maxLength: 3 }) : value;
  }
  // At most one member of each oneof.
  return fc.record(record, { requiredKeys: [], noNullPrototype: true }).map((message) => {
    for (const oneof of type.oneofsArray) {
      for (const name of oneof.oneof.filter((n) => n in message).slice(1)) delete message[name];
    }
    return message;
  });
}

Deno.test("fuzz: writing any ModelConfig and reading it back gives the same configuration", () => {
  fc.assert(
    fc.property(messageArbitrary(MODEL_CONFIG_TYPE, 0), (config) => {
      assert.deepEqual(parseModelConfig(formatModelConfig(config)), config);
    }),
    { numRuns: RUNS },
  );
});
