import assert from "node:assert/strict";
import { resolveModelSpecs } from "./config.ts";
import { checkFaults, Faults, type FaultSpec } from "./faults.ts";

function spec(value: unknown): FaultSpec | undefined {
  const problems: string[] = [];
  const result = checkFaults(value, (field, message) => problems.push(`${field} ${message}`));
  if (problems.length > 0) throw new Error(problems.join("; "));
  return result;
}

Deno.test("a stall holds responses from its start to its end, counted from the first request", () => {
  const faults = new Faults(spec({ stall: { start_ms: 500, duration_ms: 200 } })!, Math.random);
  assert.equal(faults.releaseAt(10), 10, "before the first request nothing stalls");
  faults.arrive(1000);
  faults.arrive(1300);
  assert.equal(faults.releaseAt(1499), 1499);
  assert.equal(faults.releaseAt(1500), 1700);
  assert.equal(faults.releaseAt(1650), 1700);
  assert.equal(faults.releaseAt(1700), 1700);
  assert.equal(faults.releaseAt(5000), 5000, "without a period the stall happens once");
});

Deno.test("a periodic stall repeats", () => {
  const faults = new Faults(
    spec({ stall: { start_ms: 100, duration_ms: 50, period_ms: 1000 } })!,
    Math.random,
  );
  faults.arrive(0);
  assert.equal(faults.releaseAt(1120), 1150);
  assert.equal(faults.releaseAt(1160), 1160);
});

Deno.test("slow start decays linearly and errors follow the rate", () => {
  let draws = 0;
  const faults = new Faults(
    spec({ slow_start: { duration_ms: 1000, extra_ms: 20 }, error_rate: 0.25 })!,
    () => [0.1, 0.3, 0.2, 0.9][draws++ % 4],
  );
  faults.arrive(100);
  assert.equal(faults.extraComputeMs(100), 20);
  assert.equal(faults.extraComputeMs(600), 10);
  assert.equal(faults.extraComputeMs(1100), 0);
  assert.deepEqual([faults.fails(), faults.fails(), faults.fails(), faults.fails()], [
    true,
    false,
    true,
    false,
  ]);
});

Deno.test("fault configurations are checked field by field", () => {
  const problems: string[] = [];
  checkFaults(
    { stall: { start_ms: -1 }, error_rate: 2, slow_start: 3, typo: 1 },
    (field, message) => problems.push(`${field} ${message}`),
  );
  assert.deepEqual(problems, [
    "faults.typo is not a known field",
    "faults.stall.start_ms must be a number >= 0, got -1",
    "faults.stall.duration_ms is required",
    "faults.error_rate must be a number from 0 to 1, got 2",
    "faults.slow_start must be a mapping of duration_ms, extra_ms, got 3",
  ]);
  const [model] = resolveModelSpecs([{
    name: "m",
    kind: "identity",
    inputs: [{ name: "IN", datatype: "FP32", dims: [1] }],
    outputs: [{ name: "OUT", datatype: "FP32", dims: [1] }],
    faults: { error_rate: 0.5 },
  }], "test");
  assert.deepEqual(model.faults, { errorRate: 0.5 });
});

Deno.test("overload adds its time to executions that start behind a long queue", () => {
  const faults = new Faults(spec({ overload: { queue: 4, extra_ms: 10 } })!, Math.random);
  faults.arrive(0);
  assert.deepEqual([faults.extraComputeMs(5, 4), faults.extraComputeMs(5, 5)], [0, 10]);
});
