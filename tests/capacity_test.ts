/**
 * The capacity search and the CI gates end to end, against the reference
 * server's ground truth: a model of 2 instances of 10 ms serves 200/s, and at
 * concurrency c its requests take ceil(c / 2) x 10 ms.
 */
import assert from "node:assert/strict";
import { type ModelConfig, startServerInWorker } from "../lib/server/mod.ts";
import { runCli, ServeProcess } from "./_helpers.ts";
import { loadSchema, validate } from "./_json_schema.ts";

type Json = Record<string, unknown>;

const PAIR: ModelConfig = {
  name: "pair",
  kind: "identity",
  compute_ms: 10,
  instances: 2,
  inputs: [{ name: "INPUT0", datatype: "FP32", dims: [16] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [16] }],
};

/** Fails a quarter of its requests with HTTP 500. */
const FLAKY: ModelConfig = { ...PAIR, name: "flaky", compute_ms: 1, faults: { error_rate: 0.25 } };

async function withPair<T>(fn: (addr: string, dir: string) => Promise<T>): Promise<T> {
  // pair40: 2 instances of 40 ms serve 50/s, few requests per second for a loaded machine.
  const server = await startServerInWorker({
    models: [PAIR, FLAKY, { ...PAIR, name: "pair40", compute_ms: 40 }],
  });
  const dir = await Deno.makeTempDir();
  try {
    return await fn(server.addr, dir);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("max-concurrency-under-sla: 2 x 10 ms within 35 ms answers 6, in far fewer points than a sweep", async () => {
  await withPair(async (addr, dir) => {
    const cli = await runCli([
      ...["-m", "pair", "-u", addr, "--search-recipe", "max-concurrency-under-sla"],
      // p90: p99 of 300 requests is their third slowest, which timer jitter of a loaded 2-core
      // machine moves by 5-15 ms; the p90 of c = 6 is 30 ms plus overheads, of c = 7 40 ms.
      ...["--slo", "request_latency:p90<=35", "-p", "500"],
      ...["--search-checkpoint", `${dir}/c.ckpt`, "--summary-json", `${dir}/s.json`],
      ...["-f", `${dir}/perf.csv`, "--report-html", `${dir}/r.html`],
    ], { timeoutMs: 120_000 });
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    assert.match(cli.stdout, /Capacity search \(max-concurrency-under-sla\): concurrency 6\n/);
    assert.match(
      cli.stdout,
      /Last passing: concurrency 6 \(request_latency:p90 [\d.]+ <= 35 msec\)/,
    );
    assert.match(
      cli.stdout,
      /First failing: concurrency 7 \(request_latency:p90 [\d.]+ > 35 msec\)/,
    );
    assert.match(cli.stdout, /SLOs met: request_latency:p90/);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.deepEqual(validate(summary, await loadSchema("summary.schema.json")), []);
    const capacity = summary.capacity as Json;
    assert.equal(capacity.value, 6);
    assert.equal(capacity.mode, "concurrency");
    assert.equal(capacity.slo, "request_latency:p90<=35");
    assert.equal((capacity.passing as Json).value, 6);
    assert.equal((capacity.failing as Json).value, 7);
    // A sweep of 1..64 measures 64 levels.
    assert.ok((capacity.points as number) <= 32, `points ${capacity.points}`);
    assert.equal(summary.levels.length, capacity.points);
    assert.match(await Deno.readTextFile(`${dir}/perf.csv`), /\nCapacity,6\n/);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    assert.match(html, /data-answer="6"/);
    assert.match(html, /data-slo="request_latency:p90&#60;=35"/);

    // A rerun resumes: every level comes from the checkpoint, the answer is the same.
    const again = await runCli([
      ...["-m", "pair", "-u", addr, "--search-recipe", "max-concurrency-under-sla"],
      ...["--slo", "request_latency:p90<=35", "-p", "500", "--search-checkpoint", `${dir}/c.ckpt`],
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      /Resuming the capacity search from .*c\.ckpt \(levels measured: \d+\)/,
    );
    assert.match(again.stdout, /Capacity search \(max-concurrency-under-sla\): concurrency 6\n/);
  });
});

Deno.test("max-rate-under-sla: constant arrivals meet the SLO up to the rate the two instances serve", async () => {
  await withPair(async (addr, dir) => {
    const cli = await runCli([
      ...["-m", "pair40", "-u", addr, "--search-recipe", "max-rate-under-sla"],
      ...["--request-rate-range", "10:0", "--slo", "request_latency:p90<=120"],
      ...["-p", "1500", "--max-trials", "5"],
      ...["--search-checkpoint", `${dir}/c.ckpt`, "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 240_000 });
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    const capacity = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).capacity as Json;
    assert.equal(capacity.mode, "request_rate");
    // D/D/2: no queueing below 50/s, an ever growing queue above; the search stops within 5 %.
    const value = capacity.value as number;
    assert.ok(value >= 40 && value <= 52, `answer ${value}`);
    assert.ok((capacity.points as number) <= 16, `points ${capacity.points}`);
  });
});

Deno.test("max-goodput-under-slo: the highest concurrency whose requests meet their bound for 90 %", async () => {
  await withPair(async (addr, dir) => {
    // Up to 4 in flight every request takes 10-20 ms; from 5 on some take 30 ms and more.
    const cli = await runCli([
      ...["-m", "pair", "-u", addr, "--search-recipe", "max-goodput-under-slo"],
      ...["--slo", "request_latency<=27", "--slo-attainment", "0.9", "-p", "500"],
      ...["--search-checkpoint", `${dir}/c.ckpt`, "--summary-json", `${dir}/s.json`],
    ], { timeoutMs: 120_000 });
    assert.equal(cli.code, 0, cli.stderr + cli.stdout);
    assert.match(cli.stdout, /SLOs met: 100 % of requests within request_latency<=27 >= 90 %/);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.equal(summary.capacity.slo, "request_latency<=27 for 90 % of requests");
    assert.ok([4, 5].includes(summary.capacity.value), JSON.stringify(summary.capacity));
    const passing = summary.levels[summary.capacity.passing.level_index];
    assert.ok(passing.client.good_count >= 0.9 * passing.client.request_count);
  });
});

Deno.test("SLOs no load can meet are an answer; contradictions are one line each before any load", async () => {
  await withPair(async (addr, dir) => {
    const none = await runCli([
      ...["-m", "pair", "-u", addr, "--search-recipe", "max-concurrency-under-sla"],
      ...["--slo", "request_latency:p50<=2", "-p", "300", "--search-checkpoint", `${dir}/c.ckpt`],
    ]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(
      none.stdout,
      /Capacity search \(max-concurrency-under-sla\): none: no level meets every SLO/,
    );
    assert.match(none.stdout, /Stopped: the SLOs are broken at the lowest concurrency 1/);

    const bad = await runCli([
      ...["-m", "pair", "-u", addr, "--search-recipe", "max-concurrency-under-sla"],
      ...["--concurrency-range", "4", "--slo", "time_to_first_token:p90<=200"],
      ...["--threshold", "request_lag:p99<=3", "--search-checkpoint", `${dir}/x.ckpt`],
    ]);
    assert.equal(bad.code, 1);
    const lines = bad.stderr.trim().split("\n");
    assert.equal(lines.length, 4, bad.stderr);
    assert.ok(lines.includes(
      "error: --slo time_to_first_token:p90<=200: --service-kind triton has no value for time_to_first_token (token-streaming LLM runs only (--service-kind openai))",
    ));
    assert.ok(lines.some((l) =>
      l.startsWith(
        'error: Invalid value "request_lag:p99<=3" for --threshold: unknown metric "request_lag": expected one of request_latency, latency, time_to_first_token,',
      )
    ));
    assert.ok(lines.includes(
      "error: Option --search-recipe max-concurrency-under-sla needs levels to search: --concurrency-range 4 is a single level (give START:END, or START:0 to bracket from START)",
    ));
    assert.equal(await Deno.stat(`${dir}/x.ckpt`).catch(() => undefined), undefined);
  });
});

Deno.test("--threshold with --abort-on-fail stops at the first breach, keeps what was measured, exit 4", async () => {
  await withPair(async (addr, dir) => {
    const cli = await runCli([
      ...["-m", "pair", "-u", addr, "--concurrency-range", "1:8", "-p", "500", "-s", "100"],
      // The average of c in flight on two 10 ms instances is c x 5 ms: 5 is the first over 22.
      ...["--threshold", "request_latency:avg<=22", "--abort-on-fail"],
      ...["--summary-json", `${dir}/s.json`],
    ]);
    assert.equal(cli.code, 4, cli.stderr + cli.stdout);
    const at = Number(
      /error: --threshold breached at concurrency (\d+): request_latency:avg [\d.]+ > 22 msec/
        .exec(cli.stderr)?.[1],
    );
    assert.ok(at >= 4 && at <= 6, cli.stderr);
    assert.equal(cli.stdout.match(/Thresholds held: request_latency:avg/g)?.length, at - 1);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/s.json`));
    assert.deepEqual(
      summary.levels.map((l: Json) => l.value),
      [...Array(at).keys()].map((i) => i + 1),
    );
    assert.match(summary.note, new RegExp(`--threshold breached at concurrency ${at}`));

    const failing = await runCli([
      ...["-m", "flaky", "-u", addr, "--concurrency-range", "1:4", "-p", "500"],
      ...["--failed-request-threshold", "10%", "--summary-json", `${dir}/f.json`],
    ]);
    assert.equal(failing.code, 4, failing.stderr + failing.stdout);
    // The first window ends the run: its level is reported from that window.
    assert.equal(JSON.parse(await Deno.readTextFile(`${dir}/f.json`)).levels.length, 1);
    assert.match(
      failing.stderr,
      /--failed-request-threshold 10% reached: \d+ of \d+ requests failed/,
    );
  });
});

Deno.test({
  name: "a server that dies mid-search keeps the levels measured; the rerun resumes and answers",
  async fn() {
    const dir = await Deno.makeTempDir();
    const serve = new ServeProcess(0, 0);
    await serve.start();
    try {
      // `slow`: one instance of 10 ms, so requests take c x 10 ms: 3 meets 35 ms, 4 does not.
      const args = [
        ...["-m", "slow", "-u", serve.http, "--search-recipe", "max-concurrency-under-sla"],
        ...[
          "--slo",
          "request_latency:p90<=35",
          "-p",
          "300",
          "--search-checkpoint",
          `${dir}/c.ckpt`,
        ],
        ...["--stall-timeout", "2000", "--request-timeout", "2000"],
      ];
      let killed = false;
      const first = await runCli(args, {
        onStdout: (text) => {
          if (!killed && text.includes("Request concurrency: 2\n")) {
            killed = true;
            serve.kill();
          }
        },
      });
      assert.notEqual(first.code, 0, first.stdout);
      const saved = JSON.parse(await Deno.readTextFile(`${dir}/c.ckpt`)).levels.length;
      assert.ok(saved >= 2, `saved ${saved}`);
      const port = Number(serve.http.split(":").at(-1));
      const again = new ServeProcess(port, 0);
      await again.start();
      try {
        const second = await runCli(args, { timeoutMs: 90_000 });
        assert.equal(second.code, 0, second.stderr + second.stdout);
        assert.match(second.stdout, new RegExp(`levels measured: ${saved}\\)`));
        assert.match(
          second.stdout,
          /Capacity search \(max-concurrency-under-sla\): concurrency 3\n/,
        );
      } finally {
        await again.kill();
      }
    } finally {
      await serve.kill();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
