/** wrk, the HTTP/1.1 reference: a Lua script replaying inferperf's exact request. */
import { runSampled, type SampledResult } from "./process.ts";

const decoder = new TextDecoder();
const HEAD_END = "\r\n\r\n";
/** wrk derives these from the URL and the body. */
const WRK_OWN_HEADERS = new Set(["host", "content-length"]);

export interface RawRequest {
  method: string;
  path: string;
  headers: [string, string][];
  body: Uint8Array;
}

export interface WrkRun extends SampledResult {
  requestsPerSecond: number;
  p50Us: number;
  p99Us: number;
  /** Socket errors and non-2xx responses. */
  errors: number;
}

/** Splits the bytes of one HTTP/1.1 request with a Content-Length body. */
export function parseRawRequest(bytes: Uint8Array): RawRequest {
  const text = decoder.decode(bytes.subarray(0, Math.min(bytes.length, 64 * 1024)));
  const end = text.indexOf(HEAD_END);
  if (end < 0) throw new RangeError("The request has no end of header");
  const [requestLine, ...lines] = text.slice(0, end).split("\r\n");
  const [method, path] = requestLine.split(" ");
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  // The head is ASCII, so its character count is its byte count.
  return { method, path, headers, body: bytes.slice(end + HEAD_END.length) };
}

/** A wrk script sending `request` (body read from `bodyPath`), built once so wrk keeps its static fast path. */
export function wrkScript(request: RawRequest, bodyPath: string): string {
  const lua = (s: string) => JSON.stringify(s);
  const headers = request.headers
    .filter(([name]) => !WRK_OWN_HEADERS.has(name.toLowerCase()))
    .map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}\n`)
    .join("");
  return `local file = assert(io.open(${lua(bodyPath)}, "rb"))
wrk.method = ${lua(request.method)}
wrk.path = ${lua(request.path)}
wrk.body = file:read("*a")
file:close()
${headers}`;
}

const UNITS_US: Record<string, number> = { us: 1, ms: 1000, s: 1_000_000 };

function latencyUs(output: string, percent: number): number {
  const match = new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s)\\s*$`, "m").exec(output);
  return match ? Number(match[1]) * UNITS_US[match[2]] : NaN;
}

/** wrk's summary: requests/s, latency percentiles and errors. */
export function parseWrkOutput(output: string): Omit<WrkRun, keyof SampledResult> {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  if (!rps) throw new Error(`Unexpected wrk output: ${output.trim()}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    output,
  );
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  const errors = (socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0) +
    (non2xx ? Number(non2xx[1]) : 0);
  return {
    requestsPerSecond: Number(rps[1]),
    p50Us: latencyUs(output, 50),
    p99Us: latencyUs(output, 99),
    errors,
  };
}

/** Runs wrk against `url` with `connections` connections for `seconds`, replaying `request`. */
export async function runWrk(
  wrk: string,
  request: RawRequest,
  options: {
    url: string;
    connections: number;
    threads: number;
    seconds: number;
    /** Requests the server has answered, sampled with wrk's CPU time. */
    counter?: () => Promise<number>;
  },
): Promise<WrkRun> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf-bench-wrk-" });
  try {
    const bodyPath = `${dir}/body.bin`;
    await Deno.writeFile(bodyPath, request.body);
    await Deno.writeTextFile(`${dir}/request.lua`, wrkScript(request, bodyPath));
    const threads = Math.min(options.threads, options.connections);
    const result = await runSampled(wrk, [
      "-t",
      String(threads),
      "-c",
      String(options.connections),
      "-d",
      `${options.seconds}s`,
      "--latency",
      "-s",
      `${dir}/request.lua`,
      options.url,
    ], { intervalMs: 250, ...(options.counter ? { counter: options.counter } : {}) });
    if (result.code !== 0) {
      throw new Error(`wrk exited with code ${result.code}: ${result.stderr.trim()}`);
    }
    return { ...result, ...parseWrkOutput(result.stdout) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
