import assert from "node:assert/strict";
import { budgetOf, BUDGETS, formatBudget, withBudgets } from "./budget.ts";
import type { BenchRow } from "./types.ts";

const row = (name: string, inferperf: number): BenchRow => ({
  name,
  unit: "µs CPU/req",
  inferperf,
});

Deno.test("every budget is a positive number of µs", () => {
  for (const b of BUDGETS) assert.ok(b.us > 0, `${b.case} ${b.row}`);
});

Deno.test("budgetOf finds a row by case and name, whatever rate its name carries", () => {
  const http = BUDGETS.find((b) => b.case === "http")!.us;
  assert.equal(budgetOf("http", row("HTTP small c=64: client CPU", 1)), http);
  assert.equal(budgetOf("http", row("HTTP small c=16: client CPU", 1)), undefined);
  assert.equal(budgetOf("grpc", row("HTTP small c=64: client CPU", 1)), undefined);
  const open = BUDGETS.find((b) => b.case === "cost")!.us;
  assert.equal(budgetOf("cost", row("Client cost: CPU (rate 4987/s, 31 s)", 1)), open);
  assert.equal(budgetOf("cost", row("Client cost: CPU (concurrency 4987/s, 31 s)", 1)), undefined);
});

Deno.test("withBudgets sets the budget of budgeted rows only; formatBudget compares", () => {
  const http = BUDGETS.find((b) => b.case === "http")!.us;
  const result = withBudgets({
    id: "http",
    title: "HTTP",
    rows: [row("HTTP small c=64: client CPU", http / 2), row("HTTP small c=64", 9)],
    notes: [],
  });
  assert.equal(result.rows[0].budget, http);
  assert.equal(result.rows[1].budget, undefined);
  assert.equal(formatBudget(result.rows[0]), `<= ${http}: 0.50 x`);
  assert.equal(
    formatBudget({ ...result.rows[0], inferperf: http * 1.1 }),
    `<= ${http}: OVER 1.10 x`,
  );
  assert.equal(formatBudget(result.rows[1]), "");
});
