import assert from "node:assert/strict";
import { TraceSettingsStore } from "./trace.ts";
import { ServerError } from "./errors.ts";
import { startServer } from "./server.ts";
import { GrpcClient } from "../protocol/grpc/client.ts";
import { encodeMessage, Messages } from "../protocol/grpc/messages.ts";
import { SERVICE_PATH, Status } from "../protocol/grpc/wire.ts";
import { InferError } from "../protocol/errors.ts";

const DEFAULTS = {
  trace_file: [""],
  trace_level: ["OFF"],
  trace_rate: ["1000"],
  trace_count: ["-1"],
  log_frequency: ["0"],
  trace_mode: ["triton"],
};

function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ServerError && e.code === "invalid_argument", String(e));
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("trace settings: Triton's defaults, updates, and null or empty restoring a default", () => {
  const store = new TraceSettingsStore();
  assert.deepEqual(store.get(), DEFAULTS);
  assert.deepEqual(
    store.update({
      trace_level: ["TIMESTAMPS", "TENSORS", "TIMESTAMPS"],
      trace_rate: "10",
      trace_count: ["+5"],
      log_frequency: "0",
    }),
    {
      ...DEFAULTS,
      trace_level: ["TIMESTAMPS", "TENSORS"],
      trace_rate: ["10"],
      trace_count: ["5"],
    },
  );
  assert.deepEqual(store.update({ trace_level: null, trace_rate: [] }), {
    ...DEFAULTS,
    trace_count: ["5"],
  });
});

Deno.test("trace settings: invalid values are refused as Triton does and change nothing", () => {
  const store = new TraceSettingsStore();
  invalid(
    () => store.update({ trace_rate: "5", trace_level: ["TIMESTAMPS", "VERBOSE"] }),
    /^unsupported trace level 'VERBOSE', expecting OFF, TIMESTAMPS, TENSORS$/,
  );
  assert.deepEqual(store.get(), DEFAULTS);
  invalid(() => store.update({ trace_count: "-2" }), /'trace_count', expecting an integer >= -1/);
  invalid(() => store.update({ trace_rate: "1.5" }), /'trace_rate', expecting an integer >= 0/);
  invalid(() => store.update({ log_frequency: ["1", "2"] }), /one value for 'log_frequency'/);
  invalid(() => store.update({ trace_rate: 5 }), /unable to parse 'trace_rate'/);
  invalid(() => store.update({ trace_file: "/tmp/t.json" }), /can not be updated/);
  invalid(() => store.update({ constructor: "x" }), /unknown trace setting 'constructor'/);
});

Deno.test("HTTP and gRPC front ends share the settings: POST and GET /v2/trace/setting, TraceSetting", async () => {
  const server = await startServer();
  const url = `http://${server.addr}/v2/trace/setting`;
  const grpc = new GrpcClient({ url: server.grpcAddr });
  try {
    const metadata = await (await fetch(`http://${server.addr}/v2`)).json();
    assert.ok(metadata.extensions.includes("trace"));
    assert.ok((await grpc.serverInfo()).extensions.includes("trace"));

    const posted = await fetch(url, {
      method: "POST",
      body: JSON.stringify({ trace_level: ["TIMESTAMPS"], trace_rate: "100" }),
    });
    assert.equal(posted.status, 200);
    const expected = {
      trace_file: "",
      trace_level: ["TIMESTAMPS"],
      trace_rate: "100",
      trace_count: "-1",
      log_frequency: "0",
      trace_mode: "triton",
    };
    assert.deepEqual(await posted.json(), expected);
    assert.deepEqual(await (await fetch(url)).json(), expected);

    const refused = await fetch(url, { method: "POST", body: '{"trace_level": ["ALL"]}' });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), {
      error: "unsupported trace level 'ALL', expecting OFF, TIMESTAMPS, TENSORS",
    });
    const malformed = await fetch(url, { method: "POST", body: "[1]" });
    assert.equal(malformed.status, 400);
    await malformed.body?.cancel();
    const put = await fetch(url, { method: "PUT", body: "{}" });
    assert.equal(put.status, 405);
    await put.body?.cancel();

    assert.deepEqual(await grpc.updateTraceSettings({ trace_count: ["7"], trace_rate: [] }), {
      ...DEFAULTS,
      trace_level: ["TIMESTAMPS"],
      trace_count: ["7"],
    });
    assert.equal((await (await fetch(url)).json()).trace_count, "7");
    await assert.rejects(
      grpc.updateTraceSettings({ trace_level: ["ALL"] }),
      (e: unknown) =>
        e instanceof InferError && e.status === Status.INVALID_ARGUMENT &&
        /unsupported trace level 'ALL'/.test(e.message),
    );
    await assert.rejects(
      grpc.call(
        SERVICE_PATH + "TraceSetting",
        encodeMessage(Messages.TraceSettingRequest, { settings: {}, model_name: "simple" }),
      ),
      (e: unknown) => e instanceof InferError && e.status === Status.UNIMPLEMENTED,
    );
  } finally {
    await grpc.close();
    await server.close();
  }
});
