/**
 * The profile export of streamed OpenAI answers holds, per response, what
 * perf_analyzer's OpenAI client records: the bytes of each call of curl's
 * write callback, one per piece of the body a read brought (per chunk of a
 * chunked body), so a response may hold several events, part of one, or
 * comment, `event:`, `id:` and `retry:` lines. A raw loopback server sends
 * crafted streams with known TCP writes; the export must hold exactly the
 * pieces curl would hand over, and genai-perf's parsing of them (its
 * LLMProfileDataParser._preprocess_response and text extraction, rewritten
 * below from genai_perf/profile_data_parser/llm_profile_data_parser.py and
 * genai_perf/utils.py at perf_analyzer 263c5f6e) reads what it would read of
 * perf_analyzer's export of the same bytes.
 */
import assert from "node:assert/strict";
import { concatBytes } from "../lib/input/codec.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { runCli } from "./_helpers.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const event = (content: string) =>
  `data: ${
    JSON.stringify({
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta: { content } }],
    })
  }\n\n`;
const chunk = (bytes: Uint8Array): Uint8Array =>
  concatBytes([encoder.encode(`${bytes.length.toString(16)}\r\n`), bytes, encoder.encode("\r\n")]);
const text = (s: string) => encoder.encode(s);
const DONE = "data: [DONE]\n\n";
const END = text("0\r\n\r\n");
const HEAD = text(
  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
);

interface Scenario {
  /** The server's TCP writes, 200 ms apart so that each is a read of its own. */
  writes: Uint8Array[];
  /** The responses perf_analyzer records: curl's write callback's bytes, as text. */
  pieces: string[];
  /** What genai-perf reads of them: the text of each response it keeps, and its failures. */
  genaiPerf: { texts: string[]; failed: number };
}

const split = encoder.encode(event("b"));
const cutAt = 20;
const accented = encoder.encode(event("é!"));
const eAt = accented.indexOf(0xc3) + 1;
const multiLine = 'data: {"object":"chat.completion.chunk",\n' +
  'data: "choices":[{"index":0,"delta":{"content":"a"}}]}\n\n';

const SCENARIOS: Record<string, Scenario> = {
  // Several events in one chunk are one response; chunks read together are one each.
  together: {
    writes: [
      concatBytes([
        HEAD,
        chunk(text(event("a") + event("b") + event("c"))),
        chunk(text(event("d"))),
        chunk(text(event("e"))),
      ]),
      concatBytes([chunk(text(DONE)), END]),
    ],
    pieces: [event("a") + event("b") + event("c"), event("d"), event("e"), DONE],
    genaiPerf: { texts: ["abc", "d", "e"], failed: 0 },
  },
  // One event's chunk arriving in two reads is two responses; genai-perf joins them again.
  split: {
    writes: [
      concatBytes([HEAD, chunk(text(event("a"))), text(`${split.length.toString(16)}\r\n`)]),
      split.subarray(0, cutAt),
      concatBytes([split.subarray(cutAt), text("\r\n"), chunk(text(DONE)), END]),
    ],
    pieces: [event("a"), event("b").slice(0, cutAt), event("b").slice(cutAt), DONE],
    genaiPerf: { texts: ["a", "b"], failed: 0 },
  },
  // A character cut between reads: perf_analyzer writes both halves raw (invalid UTF-8) and
  // genai-perf, reading its file ignoring what does not decode, loses the character.
  utf8: {
    writes: [
      concatBytes([HEAD, text(`${accented.length.toString(16)}\r\n`), accented.subarray(0, eAt)]),
      concatBytes([accented.subarray(eAt), text("\r\n"), chunk(text(DONE)), END]),
    ],
    pieces: [
      decoder.decode(accented.subarray(0, eAt - 1)),
      decoder.decode(accented.subarray(eAt + 1)),
      DONE,
    ],
    genaiPerf: { texts: ["!"], failed: 0 },
  },
  // Field lines other than data: and comments stay in the responses; genai-perf skips every
  // response that starts with one (its not_data_sse_field), tokens and all.
  fields: {
    writes: [
      concatBytes([
        HEAD,
        chunk(text(`event: message\n${event("a")}`)),
        chunk(text(`id: 7\n${event("b")}`)),
        chunk(text(": keep-alive\n\n")),
        chunk(text("retry: 100\n\n")),
        chunk(text(event("c"))),
      ]),
      concatBytes([chunk(text(DONE)), END]),
    ],
    pieces: [
      `event: message\n${event("a")}`,
      `id: 7\n${event("b")}`,
      ": keep-alive\n\n",
      "retry: 100\n\n",
      event("c"),
      DONE,
    ],
    genaiPerf: { texts: ["c"], failed: 0 },
  },
  // An event whose data spans two data: lines (joined by a newline: valid JSON for an SSE
  // reader); genai-perf parses the response as one JSON text, fails and drops it.
  multiline: {
    writes: [
      concatBytes([HEAD, chunk(text(multiLine)), chunk(text(event("b")))]),
      concatBytes([chunk(text(DONE)), END]),
    ],
    pieces: [multiLine, event("b"), DONE],
    genaiPerf: { texts: ["b"], failed: 1 },
  },
};

// ---- genai-perf's reading of an OpenAI chat export's responses -------------------------------

const notDataField = (msg: string) => /^(:|event:|id:|retry:)/.test(msg);
const errorEvent = (msg: string) => msg.startsWith("event:") && msg.toLowerCase().includes("error");
/** Python's str.strip(). */
const strip = (s: string) => s.trim();
const removeSsePrefix = (msg: string) => strip(msg.startsWith("data:") ? msg.slice(5) : msg);

/** _extract_text_output for chat completions; throws where the Python raises. */
function extractText(response: string): string {
  if (!response || notDataField(response)) return "";
  const data = removeSsePrefix(response);
  if (data === "[DONE]") return "";
  const body = JSON.parse(data);
  const choices = body.choices ?? [{}];
  if (choices.length === 0) throw new RangeError("list index out of range");
  const completions = choices[0];
  if (!body.object) return completions.text ?? "";
  if (body.object === "chat.completion") return completions.message.content ?? "";
  if (body.object === "chat.completion.chunk") return completions.delta.content ?? "";
  throw new Error(`Unknown OpenAI response object type '${body.object}'.`);
}

const isEmpty = (response: string) => !extractText(response);

/** _preprocess_response, then the text of each response kept. */
function genaiPerfReads(responses: string[]): { texts: string[]; failed: number } {
  const outputs = [...responses];
  let failed = 0;
  // Splintered events: a response not starting with "data: " belongs to the one before.
  for (let i = outputs.length - 1; i >= 1; i--) {
    const response = outputs[i];
    if (notDataField(response)) continue;
    if (!response.startsWith("data: ")) {
      const at = response.indexOf("data: ");
      if (!outputs[i - 1].includes("data:")) throw new Error("Detected a splintered SSE response");
      if (at === -1) {
        outputs[i - 1] += response;
        outputs[i] = "";
      } else {
        outputs[i - 1] += response.slice(0, at);
        outputs[i] = response.slice(at);
      }
    }
  }
  // Several events in one response are merged into one.
  for (let i = 0; i < outputs.length; i++) {
    const events = strip(outputs[i]).split("\n\n");
    for (const e of events) {
      if (errorEvent(e)) {
        outputs[i] = "";
        failed++;
      }
    }
    try {
      if (events.length > 1) {
        const data = JSON.parse(removeSsePrefix(events[0]));
        data.choices[0].delta.content = events.map(extractText).join("");
        outputs[i] = JSON.stringify(data);
      } else if (isEmpty(events[0])) outputs[i] = "";
    } catch {
      outputs[i] = "";
      failed++;
    }
  }
  const kept = outputs.filter((response) => response && !isEmpty(response));
  return { texts: kept.map(extractText), failed };
}

// ---- the crafted server ------------------------------------------------------------------------

/** Answers each POST with the scenario its prompt names, each GET with 404. */
function serve(listener: Deno.Listener): Promise<void> {
  const connections: Promise<void>[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) connections.push(answer(conn));
    } catch {
      // The listener was closed.
    }
  })();
  return accepting.then(() => Promise.all(connections).then(() => {}));
}

async function answer(conn: Deno.Conn): Promise<void> {
  let buffered: Uint8Array = new Uint8Array(0);
  const buf = new Uint8Array(65536);
  try {
    for (;;) {
      let headEnd = -1;
      while ((headEnd = decoder.decode(buffered).indexOf("\r\n\r\n")) === -1) {
        const n = await conn.read(buf);
        if (n === null) return;
        buffered = concatBytes([buffered, buf.subarray(0, n)]);
      }
      const head = decoder.decode(buffered.subarray(0, headEnd));
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      while (buffered.length < headEnd + 4 + length) {
        const n = await conn.read(buf);
        if (n === null) return;
        buffered = concatBytes([buffered, buf.subarray(0, n)]);
      }
      const body = decoder.decode(buffered.subarray(headEnd + 4, headEnd + 4 + length));
      buffered = buffered.slice(headEnd + 4 + length);
      if (head.startsWith("GET")) {
        await conn.write(text("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"));
        continue;
      }
      const scenario = SCENARIOS[JSON.parse(body).messages[0].content];
      for (const [i, bytes] of scenario.writes.entries()) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
        for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
      }
    }
  } catch {
    // The client closed the connection.
  } finally {
    conn.close();
  }
}

Deno.test("streamed responses export as perf_analyzer's write-callback pieces; genai-perf reads them alike", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = serve(listener);
  const dir = await Deno.makeTempDir();
  try {
    const names = Object.keys(SCENARIOS);
    const payloads = names.map((name) => ({
      payload: [{ model: "m", messages: [{ role: "user", content: name }], stream: true }],
    }));
    await Deno.writeTextFile(`${dir}/data.json`, JSON.stringify({ data: payloads }));
    const r = await runCli([
      ...["-u", `127.0.0.1:${listener.addr.port}`, "-m", "m", "--service-kind", "openai"],
      ...["--endpoint", "v1/chat/completions", "--input-data", `${dir}/data.json`],
      ...["--request-count", String(names.length), "--profile-export-file", `${dir}/export.json`],
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const exported = parseProfileExport(await Deno.readTextFile(`${dir}/export.json`));
    const requests = exported.experiments[0].requests;
    assert.equal(requests.length, names.length);
    const seen = new Set<string>();
    for (const request of requests) {
      const name = JSON.parse(request.request_inputs.payload as string).messages[0].content;
      seen.add(name);
      const scenario = SCENARIOS[name];
      const pieces = request.response_outputs.map((output) => output.response as string);
      assert.deepEqual(pieces, scenario.pieces, name);
      assert.equal(request.response_timestamps.length, pieces.length, name);
      assert.deepEqual(genaiPerfReads(pieces), scenario.genaiPerf, name);
    }
    assert.equal(seen.size, names.length, "every scenario exported once");
  } finally {
    listener.close();
    await serving;
    await Deno.remove(dir, { recursive: true });
  }
});
