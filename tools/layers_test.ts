import assert from "node:assert/strict";
import {
  checkLayers,
  findCircles,
  findPrivate,
  findUpward,
  formatReport,
  parseImports,
} from "./layers.ts";

Deno.test("parseImports finds static, type-only, re-exported and dynamic relative imports", () => {
  const source = `
import { a } from "./a.ts";
import type { B } from "../b/b.ts";
import {
  c,
  type D,
} from "./c.ts";
export * from "./e.ts";
export { f } from "./f.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import assert from "node:assert/strict";
import { parse } from "yaml";
const g = await import("./g.ts");
// import { h } from "./commented.ts";
/* export * from "./block.ts"; */
const url = "https://example.com/x.ts";
`;
  assert.deepEqual(parseImports(source), [
    "./a.ts",
    "../b/b.ts",
    "./c.ts",
    "./e.ts",
    "./f.ts",
    "../../deno.json",
    "./g.ts",
  ]);
});

Deno.test("findCircles reports each circle once, whatever its length", () => {
  const graph = new Map([
    ["a/x.ts", ["a/y.ts"]],
    ["a/y.ts", ["a/x.ts", "b/z.ts"]],
    ["b/z.ts", ["c/p.ts"]],
    ["c/p.ts", ["c/q.ts"]],
    ["c/q.ts", ["b/z.ts"]],
    ["c/r.ts", []],
  ]);
  assert.deepEqual(findCircles(graph), [["b/z.ts", "c/p.ts", "c/q.ts"], ["a/x.ts", "a/y.ts"]]);
});

Deno.test("findUpward flags imports into the same or a higher layer, except allowed ones", () => {
  const layers = [["ground"], ["left", "right"], ["top"]];
  const graph = new Map([
    ["ground/a.ts", ["ground/b.ts"]],
    ["ground/b.ts", ["left/c.ts"]],
    ["left/c.ts", ["ground/a.ts", "right/d.ts"]],
    ["right/d.ts", ["top/e.ts"]],
    ["top/e.ts", ["left/c.ts", "ground/a.ts"]],
  ]);
  assert.deepEqual(findUpward(graph, { layers, allowed: [] }), [
    { from: "ground/b.ts", to: "left/c.ts" },
    { from: "left/c.ts", to: "right/d.ts" },
    { from: "right/d.ts", to: "top/e.ts" },
  ]);
  assert.deepEqual(
    findUpward(graph, { layers, allowed: ["ground/b.ts -> left/c.ts", "right/d.ts -> top/e.ts"] }),
    [{ from: "left/c.ts", to: "right/d.ts" }],
  );
  assert.throws(
    () => findUpward(new Map([["elsewhere/f.ts", []]]), { layers }),
    /folder "elsewhere" is in no layer/,
  );
});

Deno.test("findPrivate flags private files imported from another folder only", () => {
  const graph = new Map([
    ["a/x.ts", ["a/_own.ts", "a/sub/_deep.ts", "b/_other.ts", "b/public.ts"]],
    ["a/_own.ts", []],
    ["a/sub/_deep.ts", []],
    ["b/_other.ts", []],
    ["b/public.ts", ["b/_other.ts"]],
  ]);
  assert.deepEqual(findPrivate(graph), [{ from: "a/x.ts", to: "b/_other.ts" }]);
});

Deno.test("lib/ keeps its layers (docs/ARCHITECTURE.md)", async () => {
  const lib = new URL("../lib", import.meta.url).pathname;
  assert.equal(
    formatReport(await checkLayers(lib)),
    "lib/: no import circle, no upward import, no import of another folder's private files",
  );
});

Deno.test("every folder of lib/ opens with a mod.ts saying what it owns", async () => {
  for await (const entry of Deno.readDir(new URL("../lib", import.meta.url))) {
    if (!entry.isDirectory) continue;
    const text = await Deno.readTextFile(new URL(`../lib/${entry.name}/mod.ts`, import.meta.url));
    assert.match(text, /^\/\*\*\n \* \S[\s\S]*?May import /, `lib/${entry.name}/mod.ts`);
  }
});
