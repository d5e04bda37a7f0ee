/**
 * The layering check behind docs/ARCHITECTURE.md: reads the imports of every
 * file under lib/ (tests excepted), and fails on an import circle, on a
 * folder importing one of the same or a higher layer, or on an import of
 * another folder's private (`_name.ts`) file. `deno task check` runs it, so the
 * map in the document cannot drift from the code.
 *
 * @module
 */

/**
 * lib/'s folders from the ground up. A folder may import its own files and
 * any folder of a lower layer; folders of one layer never import each other.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["types"],
  ["input"],
  ["protocol"],
  ["measure"],
  ["load", "report", "server"],
  ["mpi"],
  ["profile"],
  ["cli"],
  ["sweep"],
  ["search"],
  ["commands"],
];

/**
 * Upward imports accepted on purpose, as "importer -> imported" (paths under
 * lib/); each is justified in docs/ARCHITECTURE.md.
 */
export const ALLOWED_UPWARD: readonly string[] = [];

/** An import of one lib/ file by another. */
export interface Import {
  from: string;
  to: string;
}

export interface LayerReport {
  circles: string[][];
  upward: Import[];
  /** Imports of another folder's private (`_name.ts`) files. */
  private: Import[];
}

const SPECIFIER =
  /(?:^|[;\s}])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Relative specifiers a source imports statically, dynamically or re-exports. */
export function parseImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\/|(?<![:"'\w])\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const match of code.matchAll(SPECIFIER)) {
    const specifier = match[1] ?? match[2];
    if (specifier.startsWith(".")) found.add(specifier);
  }
  return [...found];
}

/** The import graph of `root`'s .ts files (tests excepted), keyed by paths relative to `root`. */
export async function readGraph(root: string): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const path of await listSources(root, "")) {
    const source = await Deno.readTextFile(`${root}/${path}`);
    graph.set(path, parseImports(source).map((specifier) => resolve(path, specifier)));
  }
  return graph;
}

async function listSources(root: string, dir: string): Promise<string[]> {
  const paths: string[] = [];
  for await (const entry of Deno.readDir(dir ? `${root}/${dir}` : root)) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory && entry.name !== "testdata") {
      paths.push(...await listSources(root, path));
    } else if (entry.isFile && path.endsWith(".ts") && !path.endsWith("_test.ts")) paths.push(path);
  }
  return paths.sort();
}

function resolve(from: string, specifier: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** Circles of two or more files (strongly connected components), each sorted, largest first. */
export function findCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm; lib/ is a few hundred files, so recursion depth is no concern.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles.sort((a, b) => b.length - a.length);
}

/** Imports from a folder into one of the same or a higher layer (other than itself). */
export function findUpward(
  graph: ReadonlyMap<string, readonly string[]>,
  options: { layers?: readonly (readonly string[])[]; allowed?: readonly string[] } = {},
): Import[] {
  const layers = options.layers ?? LAYERS;
  const allowed = new Set(options.allowed ?? ALLOWED_UPWARD);
  const layerOf = (path: string) => {
    const folder = path.includes("/") ? path.slice(0, path.indexOf("/")) : "";
    const layer = layers.findIndex((folders) => folders.includes(folder));
    if (layer < 0) throw new Error(`${path}: folder "${folder}" is in no layer of tools/layers.ts`);
    return { folder, layer };
  };
  const upward: Import[] = [];
  for (const [from, imports] of graph) {
    const source = layerOf(from);
    for (const to of imports) {
      if (!graph.has(to)) continue;
      const target = layerOf(to);
      if (target.folder === source.folder || target.layer < source.layer) continue;
      if (!allowed.has(`${from} -> ${to}`)) upward.push({ from, to });
    }
  }
  return upward;
}

/** Imports of a `_private.ts` file from outside its top folder: folders share only public files. */
export function findPrivate(graph: ReadonlyMap<string, readonly string[]>): Import[] {
  const folder = (path: string) => path.slice(0, path.indexOf("/") + 1);
  const found: Import[] = [];
  for (const [from, imports] of graph) {
    for (const to of imports) {
      const name = to.slice(to.lastIndexOf("/") + 1);
      if (name.startsWith("_") && folder(to) !== folder(from)) found.push({ from, to });
    }
  }
  return found;
}

export async function checkLayers(root: string): Promise<LayerReport> {
  const graph = await readGraph(root);
  return { circles: findCircles(graph), upward: findUpward(graph), private: findPrivate(graph) };
}

export function formatReport(report: LayerReport): string {
  const lines = [
    ...report.circles.map((circle) => `circle: ${circle.join(" <-> ")}`),
    ...report.upward.map(({ from, to }) => `upward: ${from} -> ${to}`),
    ...report.private.map(({ from, to }) => `private: ${from} -> ${to}`),
  ];
  return lines.length
    ? lines.join("\n")
    : "lib/: no import circle, no upward import, no import of another folder's private files";
}

if (import.meta.main) {
  const root = new URL("../lib", import.meta.url).pathname;
  const report = await checkLayers(root);
  const text = formatReport(report);
  if (report.circles.length || report.upward.length || report.private.length) {
    console.error(text);
    console.error("See docs/ARCHITECTURE.md for the layers.");
    Deno.exit(1);
  }
  console.log(text);
}
