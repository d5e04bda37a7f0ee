import assert from "node:assert/strict";
import {
  traceSettingsFromGrpc,
  traceSettingsFromJson,
  traceSettingsToGrpc,
  traceSettingsToJson,
} from "./trace.ts";
import { ProtocolError } from "./errors.ts";
import { KServeHttpClient } from "./kserve_http.ts";
import { decodeMessage, encodeMessage, Messages } from "./grpc/messages.ts";

const SETTINGS = {
  trace_level: ["TIMESTAMPS"],
  trace_rate: ["1000"],
  trace_count: ["-1"],
  log_frequency: ["0"],
};

Deno.test("trace settings JSON: trace_level is a list, every other setting one string", () => {
  assert.deepEqual(traceSettingsToJson(SETTINGS), {
    trace_level: ["TIMESTAMPS"],
    trace_rate: "1000",
    trace_count: "-1",
    log_frequency: "0",
  });
  assert.deepEqual(traceSettingsToJson({ trace_level: ["TIMESTAMPS", "TENSORS"] }), {
    trace_level: ["TIMESTAMPS", "TENSORS"],
  });
  assert.deepEqual(
    traceSettingsFromJson({ trace_level: ["OFF"], trace_rate: "5", trace_file: "" }),
    { trace_level: ["OFF"], trace_rate: ["5"], trace_file: [""] },
  );
  assert.throws(() => traceSettingsFromJson({ trace_rate: 5 }), ProtocolError);
  assert.throws(() => traceSettingsFromJson(["OFF"]), ProtocolError);
});

Deno.test("TraceSettingRequest: Triton's field numbers on the wire", () => {
  const bytes = encodeMessage(Messages.TraceSettingRequest, {
    settings: traceSettingsToGrpc({ trace_rate: ["5"] }),
    model_name: "m",
  });
  const text = (s: string) => [...new TextEncoder().encode(s)];
  // settings (1): map entry {key (1), value (2): SettingValue {value (1)}}; model_name (2).
  const entry = [0x0a, 10, ...text("trace_rate"), 0x12, 3, 0x0a, 1, ...text("5")];
  assert.deepEqual([...bytes], [0x0a, entry.length, ...entry, 0x12, 1, ...text("m")]);
  const response = encodeMessage(Messages.TraceSettingResponse, {
    settings: traceSettingsToGrpc(SETTINGS),
  });
  assert.deepEqual(
    traceSettingsFromGrpc(decodeMessage(Messages.TraceSettingResponse, response).settings),
    SETTINGS,
  );
});

Deno.test("the HTTP client posts the settings to /v2/trace/setting and returns the answer", async () => {
  let received: { method: string; path: string; body: unknown } | undefined;
  const answer = { ...traceSettingsToJson(SETTINGS), trace_mode: "triton" };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    received = {
      method: request.method,
      path: new URL(request.url).pathname,
      body: await request.json(),
    };
    return Response.json(answer);
  });
  const client = new KServeHttpClient({
    url: `http://127.0.0.1:${server.addr.port}/base`,
    inputFormat: "binary",
    outputFormat: "binary",
  });
  try {
    const settings = await client.updateTraceSettings({
      trace_level: ["TIMESTAMPS", "TENSORS"],
      trace_count: ["10"],
    });
    assert.deepEqual(received, {
      method: "POST",
      path: "/base/v2/trace/setting",
      body: { trace_level: ["TIMESTAMPS", "TENSORS"], trace_count: "10" },
    });
    assert.deepEqual(settings, { ...SETTINGS, trace_mode: ["triton"] });
  } finally {
    await client.close();
    await server.shutdown();
  }
});
