import assert from "node:assert/strict";
import { parseGoals } from "../sweep/mod.ts";
import { record } from "../sweep/testdata/records.ts";
import { bisectWalk, constraintBoundary, sweepWalk } from "./walks.ts";
import { formatInferenceCsv, rankConfigs, rankModel } from "./report.ts";
import { trialBounds } from "./optuna.ts";
import { runSimulated, searchOf } from "./testdata/simulated.ts";

const at = (value: number, p99Ms: number) => record({ value }, { throughput: value, p99Ms });

Deno.test("binary search: the boundary of a latency budget, then halves between its ends", () => {
  const goals = parseGoals("throughput", ["max-perf_latency_p99=50"]);
  const series = [at(16, 10), at(32, 20), at(64, 80)];
  assert.deepEqual(constraintBoundary(series, goals), { pass: 32, fail: 64 });
  assert.equal(constraintBoundary(series.slice(0, 2), goals), undefined);
  assert.deepEqual(constraintBoundary([at(16, 90)], goals), { pass: 0, fail: 16 });
  assert.equal(constraintBoundary(series, parseGoals("throughput", [])), undefined);
  const walk = bisectWalk({ pass: 32, fail: 64 }, { steps: 5, goals });
  assert.equal(walk([]), 48);
  assert.equal(walk([at(48, 40)]), 56);
  assert.equal(walk([at(48, 40), at(56, 60)]), 52);
  // Stops after `steps` points, and where the interval has no integer left.
  assert.equal(bisectWalk({ pass: 32, fail: 64 }, { steps: 1, goals })([at(48, 40)]), undefined);
  assert.equal(bisectWalk({ pass: 4, fail: 5 }, { steps: 5, goals })([]), undefined);
  assert.equal(bisectWalk({ pass: 0, fail: 1 }, { steps: 5, goals })([]), undefined);
  // A sweep walks its loads until sweepStop says why not.
  const sweep = sweepWalk([16, 32, 64, 128], { goals });
  assert.equal(sweep([]), 16);
  assert.equal(sweep(series.slice(0, 2)), 64);
  assert.match(String(sweep(series)), /p99 latency 80.0 > 50 msec: higher loads are skipped/);
});

Deno.test("a request-rate search sweeps powers of two and finds the rate the model can serve", async () => {
  // 10 ms per execution: N instances x max batch B serve N x B x 100/s (the default, 1 x 8, 800/s).
  const search = searchOf(
    "--request-rate-search-enable",
    "--run-config-search-max-instance-count",
    "2",
    "--run-config-search-max-model-batch-size",
    "8",
    "--run-config-search-min-request-rate",
    "100",
    "--run-config-search-max-request-rate",
    "3200",
  );
  assert.deepEqual(search.config.requestRates, [128, 256, 512, 1024, 2048]);
  const { outcome, measured } = await runSimulated(search, { computeMs: 10 });
  const [{ model, variants }] = outcome.models;
  const best = rankConfigs(rankModel(model!, variants!))[0]!;
  assert.equal(best.record.point.mode, "request_rate");
  assert.equal(best.variant.variant.name, "m_config_7");
  // 2 x 8 x 100 = 1,600/s: the highest rate measured at or under it is 1,024; 2,048 does not
  // stabilize.
  assert.equal(best.record.point.value, 1024);
  assert.ok(measured.includes("m_config_7@2048"));
  const csv = formatInferenceCsv(outcome, search.config.inferenceFields);
  assert.match(csv.split("\n")[0]!, /^Model,Batch,Request Rate,Model Config Path,/);
  assert.match(csv.split("\n")[1]!, /^m,1,1024,m_config_7,2:CPU,8,Yes,1024.0,/);
});

Deno.test("brute search bisects the latency budget of its top configurations", async () => {
  // Closed loop, 10 ms per execution, 1 instance x max batch 1: latency = concurrency x 10 ms.
  const search = searchOf(
    "--run-config-search-max-instance-count",
    "1",
    "--run-config-search-max-model-batch-size",
    "1",
    "--run-config-search-max-concurrency",
    "64",
    "--constraints",
    "max-perf_latency_p99=55",
    "--num-configs-per-model",
    "1",
  );
  const { outcome, measured } = await runSimulated(search, { computeMs: 10 });
  // The best, the default (1 x max batch 8, 800/s): 10 ms up to concurrency 8, then c x 10 / 8 ms,
  // over 55 ms between 32 and 64; the bisection measures 48 (60 ms), 40 (50), 44 (55), 46, 45.
  assert.deepEqual(
    measured.filter((m) => m.startsWith("m_config_default")).map((m) => m.slice(17)),
    [
      "1",
      "2",
      "4",
      "8",
      "16",
      "32",
      "64",
      "48",
      "40",
      "44",
      "46",
      "45",
    ],
  );
  // m_config_0 (max batch 1) crosses it too, between 4 and 8, but is not among the top 1.
  assert.deepEqual(measured.filter((m) => m.startsWith("m_config_0")).map((m) => m.slice(11)), [
    "1",
    "2",
    "4",
    "8",
  ]);
  const [{ model, variants }] = outcome.models;
  const own = variants!.find((v) => v.variant.name === "m_config_default")!;
  // The points stay in load order for the curves.
  assert.deepEqual(
    own.records.map((r) => r.point.value),
    [1, 2, 4, 8, 16, 32, 40, 44, 45, 46, 48, 64],
  );
  const best = rankConfigs(rankModel(model!, variants!))[0]!;
  assert.equal(best.variant, own);
  // Throughput is the same from 8 on: the first of equal points wins.
  assert.ok(best.record.result.client.throughput === 800);
  assert.equal(search.config.binarySearchSteps, 5);
});

Deno.test("Optuna search: within 10 % of brute's best with at most a third of its points", async () => {
  // 4 instances x max batch 1..32 x concurrency 1..256: 216 points; the best, 4 x 32 at 128 or
  // 256, serves 12,800/s, the runner-up 3 x 32 9,600/s.
  const space = [
    "--run-config-search-max-instance-count",
    "4",
    "--run-config-search-max-model-batch-size",
    "32",
    "--run-config-search-max-concurrency",
    "256",
  ];
  const bestOf = (outcome: Awaited<ReturnType<typeof runSimulated>>["outcome"]) => {
    const [{ model, variants }] = outcome.models;
    return rankConfigs(rankModel(model!, variants!))[0]!.record.result.client.throughput;
  };
  const brute = await runSimulated(searchOf(...space), { computeMs: 10 });
  assert.equal(bestOf(brute.outcome), 12800);
  assert.equal(brute.measured.length, 186);
  const optuna = (seed: number) =>
    runSimulated(
      searchOf(
        ...space,
        "--run-config-search-mode",
        "optuna",
        "--optuna-min-trials",
        "40",
        "--optuna-max-trials",
        "50",
        "--optuna-seed",
        String(seed),
      ),
      { computeMs: 10 },
    );
  const runs = await Promise.all(Array.from({ length: 20 }, (_, seed) => optuna(seed)));
  // The default seed: the same points, in the same order, every time.
  assert.deepEqual((await optuna(0)).measured, runs[0]!.measured);
  const found = runs.filter((r) => bestOf(r.outcome) >= 0.9 * 12800).length;
  const points = runs.map((r) => r.measured.length);
  assert.ok(bestOf(runs[0]!.outcome) >= 0.9 * 12800);
  // Each point is measured once, duplicate suggestions taken from the checkpoint.
  assert.ok(runs.every((r) => new Set(r.measured).size === r.measured.length));
  assert.ok(Math.max(...points) <= 186 / 3, points.join(","));
  // Over 20 seeds the multivariate sampler finds it with every one (the independent, 17 of 20;
  // its misses found the runner-up).
  assert.ok(found >= 19, `${found} of 20 seeds within 10 %; points ${points.join(",")}`);
});

Deno.test("Optuna trial counts: a share of the space unless counts are given; both, the stricter", () => {
  const s = {
    minPercentage: 5,
    maxPercentage: 10,
    minPercentageGiven: false,
    maxPercentageGiven: false,
    earlyExit: 10,
    seed: 0,
    multivariate: true,
    concurrencyFormula: false,
    sweepDisable: false,
  };
  assert.deepEqual(trialBounds(216, s), { min: 10, max: 21 });
  assert.deepEqual(trialBounds(216, { ...s, minTrials: 40, maxTrials: 50 }), { min: 40, max: 50 });
  assert.deepEqual(
    trialBounds(216, {
      ...s,
      minTrials: 5,
      maxTrials: 50,
      minPercentageGiven: true,
      maxPercentageGiven: true,
    }),
    { min: 10, max: 21 },
  );
});
