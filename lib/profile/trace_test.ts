import assert from "node:assert/strict";
import { buildProfileConfig } from "../cli/config.ts";
import { parseArgv } from "../cli/args.ts";
import { ServerFeatureError } from "../protocol/errors.ts";
import type { InferenceClient, TraceSettings } from "../protocol/types.ts";
import type { ServerInfo } from "../types/model.ts";
import { traceSettingsOf, updateTraceSettings } from "./trace.ts";

function config(...argv: string[]) {
  return buildProfileConfig(parseArgv(["-m", "simple", ...argv]).options);
}

const TRITON: ServerInfo = { name: "triton", version: "2", extensions: ["statistics", "trace"] };

/** A client whose only working call is updateTraceSettings, recording what it was given. */
function traceClient(sent: TraceSettings[]): InferenceClient {
  return {
    updateTraceSettings: (settings: TraceSettings) => {
      sent.push(settings);
      return Promise.resolve({ ...settings, trace_mode: ["triton"] });
    },
  } as unknown as InferenceClient;
}

Deno.test("the options become the trace extension's settings, integers as strings", () => {
  assert.deepEqual(
    traceSettingsOf(
      config(
        "--trace-level",
        "TIMESTAMPS",
        "--trace-level",
        "TENSORS",
        "--trace-level",
        "TIMESTAMPS",
        "--trace-rate",
        "100",
        "--trace-count",
        "-1",
        "--log-frequency",
        "0",
      ).trace!,
    ),
    {
      trace_level: ["TIMESTAMPS", "TENSORS"],
      trace_rate: ["100"],
      trace_count: ["-1"],
      log_frequency: ["0"],
    },
  );
  assert.deepEqual(traceSettingsOf(config("--trace-count", "3").trace!), { trace_count: ["3"] });
});

Deno.test("settings are sent once, only when asked, and only to a server with the extension", async () => {
  const sent: TraceSettings[] = [];
  const client = traceClient(sent);
  assert.equal(await updateTraceSettings(client, { config: config(), server: TRITON }), undefined);
  assert.deepEqual(sent, []);
  const asked = config("--trace-level", "OFF");
  assert.deepEqual(await updateTraceSettings(client, { config: asked, server: TRITON }), {
    trace_level: ["OFF"],
    trace_mode: ["triton"],
  });
  assert.deepEqual(sent, [{ trace_level: ["OFF"] }]);
  await assert.rejects(
    updateTraceSettings(client, {
      config: asked,
      server: { name: "kserve", version: "1", extensions: ["statistics"] },
    }),
    (error: unknown) =>
      error instanceof ServerFeatureError &&
      /need a server with Triton's trace extension; "kserve" does not list "trace"/.test(
        error.message,
      ),
  );
  await assert.rejects(
    updateTraceSettings({} as InferenceClient, { config: asked, server: TRITON }),
    ServerFeatureError,
  );
});
