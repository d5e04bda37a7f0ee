/**
 * Golden files: inferperf's profile export of fixed runs against the
 * reference server compared field by field with perf_analyzer's export of the
 * same runs (tests/fixtures/profile_export/, written from perf_analyzer's
 * ProfileDataExporter and its test: which keys, in which nesting, integers
 * and doubles told apart as its rapidjson writer tells them, one
 * response_outputs entry per response timestamp). Every key perf_analyzer
 * writes is there with the same JSON type; the only keys beyond are
 * inferperf's documented additions; values that do not depend on timing are
 * equal.
 */
import assert from "node:assert/strict";
import { DEFAULT_MODELS } from "../lib/server/mod.ts";
import { startServerInWorker } from "../lib/server/worker_client.ts";
import { runCli, withServer } from "./_helpers.ts";

const FIXTURES = new URL("./fixtures/profile_export/", import.meta.url);

/** What inferperf adds, by the object it adds it to; perf_analyzer's readers ignore them. */
const ADDED: Record<string, RegExp> = {
  document: /^$/,
  experiment: /^(failed_requests|window_latency_histograms|inferperf_\w+)$/,
  request: /^(intended_timestamp|inferperf_\w+)$/,
};

/** A JSON value with its numbers told apart as written: `8` an integer, `8.0` a double. */
type Typed =
  | { kind: "integer" | "double"; text: string }
  | { kind: "string"; value: string }
  | { kind: "boolean" | "null"; value: unknown }
  | { kind: "array"; items: Typed[] }
  | { kind: "object"; fields: Map<string, Typed> };

function typed(text: string): Typed {
  const wrap = (value: unknown, source?: string): Typed => {
    if (typeof value === "number") {
      return { kind: /[.eE]/.test(source!) ? "double" : "integer", text: source! };
    }
    if (typeof value === "string") return { kind: "string", value };
    if (typeof value === "boolean") return { kind: "boolean", value };
    if (value === null) return { kind: "null", value };
    if (Array.isArray(value)) return { kind: "array", items: value as Typed[] };
    return { kind: "object", fields: new Map(Object.entries(value as Record<string, Typed>)) };
  };
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) => wrap(value, context?.source),
  ) as Typed;
}

/** Where `actual`'s shape differs from `golden`'s (the golden's arrays are homogeneous). */
function shapeDiffs(golden: Typed, actual: Typed, at: { path: string; object: string }): string[] {
  if (golden.kind !== actual.kind) {
    return [`${at.path}: ${actual.kind}, perf_analyzer ${golden.kind}`];
  }
  if (golden.kind === "array" && actual.kind === "array") {
    if (golden.items.length === 0) return [];
    if (actual.items.length === 0) return [`${at.path}: empty`];
    const object = at.path.endsWith("experiments") ? "experiment" : "request";
    return actual.items.flatMap((item, i) =>
      shapeDiffs(golden.items[0], item, { path: `${at.path}[${i}]`, object })
    );
  }
  if (golden.kind === "object" && actual.kind === "object") {
    const diffs: string[] = [];
    for (const [key, value] of golden.fields) {
      const mine = actual.fields.get(key);
      if (mine === undefined) diffs.push(`${at.path}.${key}: missing`);
      // Tensors are objects keyed by name: their values are compared, not their shape.
      else if (key !== "request_inputs" && key !== "response_outputs") {
        diffs.push(...shapeDiffs(value, mine, { path: `${at.path}.${key}`, object: key }));
      }
    }
    const added = ADDED[at.object];
    for (const key of actual.fields.keys()) {
      if (!golden.fields.has(key) && !(added?.test(key))) {
        diffs.push(`${at.path}.${key}: not perf_analyzer's`);
      }
    }
    return diffs;
  }
  return [];
}

/** `typed` back to plain JSON values (numbers as numbers). */
function plain(value: Typed): unknown {
  switch (value.kind) {
    case "integer":
    case "double":
      return Number(value.text);
    case "array":
      return value.items.map(plain);
    case "object":
      return Object.fromEntries([...value.fields].map(([k, v]) => [k, plain(v)]));
    default:
      return value.value;
  }
}

const field = (value: Typed, ...path: (string | number)[]): Typed =>
  path.reduce<Typed>((v, key) => {
    if (typeof key === "number" && v.kind === "array") return v.items[key];
    if (typeof key === "string" && v.kind === "object") return v.fields.get(key)!;
    throw new Error(`no ${key}`);
  }, value);

interface Case {
  golden: string;
  args: string[];
  /** The input data file the run reads. */
  data: unknown;
  /** Responses are the same text every time (outputs of a deterministic model). */
  exactOutputs: boolean;
}

async function compare(addr: string, c: Case): Promise<Typed> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/data.json`, JSON.stringify(c.data));
    const r = await runCli([
      ...["-u", addr, "--input-data", `${dir}/data.json`, "--request-count", "4"],
      ...["--profile-export-file", `${dir}/export.json`, ...c.args],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const golden = typed(await Deno.readTextFile(new URL(c.golden, FIXTURES)));
    const actual = typed(await Deno.readTextFile(`${dir}/export.json`));
    assert.deepEqual(shapeDiffs(golden, actual, { path: "$", object: "document" }), [], c.golden);
    for (const key of ["service_kind", "endpoint"]) {
      assert.deepEqual(field(actual, key), field(golden, key), key);
    }
    const experiment = (doc: Typed) => field(doc, "experiments", 0, "experiment");
    assert.deepEqual(experiment(actual), experiment(golden), "mode and value, typed");
    const requests = field(actual, "experiments", 0, "requests");
    assert.equal(requests.kind === "array" && requests.items.length, 4, "the measured requests");
    const want = field(golden, "experiments", 0, "requests", 0);
    for (const request of (requests as { items: Typed[] }).items) {
      const got = (key: string) => plain(field(request, key));
      assert.deepEqual(got("request_inputs"), plain(field(want, "request_inputs")));
      const times = got("response_timestamps") as number[];
      const outputs = got("response_outputs") as unknown[];
      assert.equal(outputs.length, times.length, "one output per response timestamp");
      if (c.exactOutputs) assert.deepEqual(outputs, plain(field(want, "response_outputs")));
    }
    return actual;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const IN0 = Array.from({ length: 16 }, (_, i) => i + 1);
const KSERVE_DATA = { data: [{ INPUT0: IN0, INPUT1: IN0.map(() => 2) }] };

Deno.test("golden: a KServe run and a request-rate run export as perf_analyzer's", async () => {
  await withServer(async (server) => {
    await compare(server.addr, {
      golden: "kserve.json",
      args: ["-m", "simple", "--concurrency-range", "2"],
      data: KSERVE_DATA,
      exactOutputs: true,
    });
    await compare(server.addr, {
      golden: "request_rate.json",
      args: ["-m", "simple", "--request-rate-range", "20"],
      data: KSERVE_DATA,
      exactOutputs: true,
    });
  });
});

/** Responses' text: an SSE event as it came, `data: {...}` and a blank line. */
const EVENT = /^data: (\{.*\}|\[DONE\])\n\n$/s;

Deno.test("golden: streamed and not streamed OpenAI chat runs export as perf_analyzer's", async () => {
  const server = await startServerInWorker({
    models: [{ name: "tiny", llm: { ttft_ms: 2, itl_ms: 1, output_tokens: 3 } }],
  });
  try {
    const openai = ["-m", "tiny", "--service-kind", "openai", "--endpoint", "v1/chat/completions"];
    const body = (stream: boolean) => ({
      model: "tiny",
      messages: [{ role: "user", content: "Say hello" }],
      stream,
      max_tokens: 3,
    });
    const streamed = await compare(server.addr, {
      golden: "openai_streamed.json",
      args: [...openai, "--streaming", "--concurrency-range", "1"],
      data: { data: [{ payload: [body(true)] }] },
      exactOutputs: false,
    });
    for (
      const request of (field(streamed, "experiments", 0, "requests") as { items: Typed[] }).items
    ) {
      const events = (plain(field(request, "response_outputs")) as { response: string }[])
        .map((output) => output.response);
      assert.ok(events.every((event) => EVENT.test(event)), events.join(""));
      assert.equal(events.at(-1), "data: [DONE]\n\n");
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)));
      assert.ok(chunks.every((chunk) => chunk.object === "chat.completion.chunk"));
      const text = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? "").join("");
      assert.ok(text.length > 0);
    }

    const whole = await compare(server.addr, {
      golden: "openai_not_streamed.json",
      args: [...openai, "--concurrency-range", "1"],
      data: { data: [{ payload: [body(false)] }] },
      exactOutputs: false,
    });
    for (
      const request of (field(whole, "experiments", 0, "requests") as { items: Typed[] }).items
    ) {
      const [output] = plain(field(request, "response_outputs")) as { response: string }[];
      // The whole body, as the server sent it.
      assert.equal(JSON.parse(output.response).object, "chat.completion");
    }
  } finally {
    await server.close();
  }
});

Deno.test("golden: the endpoint field is --endpoint as given, for every service kind", async () => {
  const server = await startServerInWorker({
    models: [DEFAULT_MODELS[0], { name: "tiny", llm: { ttft_ms: 1, itl_ms: 1, output_tokens: 2 } }],
  });
  const dir = await Deno.makeTempDir();
  try {
    const openai = {
      model: "tiny",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 2,
    };
    await Deno.writeTextFile(`${dir}/llm.json`, JSON.stringify({ data: [{ payload: [openai] }] }));
    await Deno.writeTextFile(`${dir}/kserve.json`, JSON.stringify(KSERVE_DATA));
    const llm = ["-m", "tiny", "--service-kind", "openai", "--input-data", `${dir}/llm.json`];
    const kserve = ["-m", "simple", "--input-data", `${dir}/kserve.json`];
    // perf_analyzer writes its --endpoint string as parsed, whatever the kind (it sends
    // nothing to it but with openai), and "" without the option.
    for (
      const [args, endpoint] of [
        [[...llm, "--endpoint", "/v1/chat/completions"], "/v1/chat/completions"],
        [[...llm, "--endpoint", "v1/chat/completions"], "v1/chat/completions"],
        [[...kserve, "--endpoint", "/v2/ignored"], "/v2/ignored"],
        [kserve, ""],
      ] as const
    ) {
      const r = await runCli([
        ...["-u", server.addr, "--request-count", "2", ...args],
        ...["--profile-export-file", `${dir}/export.json`, "--overwrite"],
      ]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      const written = typed(await Deno.readTextFile(`${dir}/export.json`));
      assert.deepEqual(
        field(written, "endpoint"),
        { kind: "string", value: endpoint },
        args.join(" "),
      );
      assert.equal((plain(field(written, "experiments", 0, "requests")) as unknown[]).length, 2);
    }
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
