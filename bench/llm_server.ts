/**
 * The LLM stream bench's server, in a process of its own: an OpenAI chat
 * endpoint that streams TOKENS tokens ITL_MS apart (first after TTFT_MS) and
 * notes when it actually wrote each one, so the bench can tell the server's
 * own gaps from what the client measured. GET /tokens: tokens written so far;
 * GET /stats: the per-request ITL and every gap, as written, in ms.
 *
 * Usage: deno run --allow-net bench/llm_server.ts PORT TTFT_MS ITL_MS TOKENS
 */
const [port, ttftMs, itlMs, tokens] = Deno.args.map(Number);
const encoder = new TextEncoder();
const written = { tokens: 0 };
const itls: number[] = [];
const gaps: number[] = [];

const event = (body: unknown) => encoder.encode(`data: ${JSON.stringify(body)}\n\n`);
const sleepUntil = (ms: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - performance.now())));

function answer(): Response {
  const arrival = performance.now();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const times: number[] = [];
      for (let i = 0; i < tokens; i++) {
        await sleepUntil(arrival + ttftMs + i * itlMs);
        const choices = [{ index: 0, delta: { content: " tok" }, finish_reason: null }];
        controller.enqueue(event({ object: "chat.completion.chunk", choices }));
        times.push(performance.now());
        written.tokens++;
      }
      const usage = { prompt_tokens: 1, completion_tokens: tokens, total_tokens: tokens + 1 };
      controller.enqueue(event({ object: "chat.completion.chunk", choices: [], usage }));
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
      itls.push((times[times.length - 1] - times[0]) / (times.length - 1));
      for (let i = 1; i < times.length; i++) gaps.push(times[i] - times[i - 1]);
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream" } });
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => console.log("ready") }, async (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/tokens") return new Response(String(written.tokens));
  if (path === "/stats") return Response.json({ itls, gaps });
  // Only completions stream tokens: a client's GET /metrics finds no Prometheus endpoint here.
  if (req.method !== "POST") return new Response("Not found", { status: 404 });
  await req.arrayBuffer();
  return answer();
});
