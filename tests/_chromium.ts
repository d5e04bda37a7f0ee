/**
 * Headless Chromium for the HTML report tests: the pages' scripts must run
 * and draw their charts. Chromium comes from the Debian package `chromium`;
 * when it is missing and cannot be installed, `chromium` says why and the
 * tests that need it are skipped.
 */

const INSTALL_TIMEOUT_MS = 240_000;

async function runs(
  command: string,
  args: string[],
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args,
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      ...(options.env ? { env: options.env } : {}),
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** The chromium binary, installing the Debian package when root may; else why not. */
async function findChromium(): Promise<{ path: string } | { reason: string }> {
  for (const path of ["chromium", "chromium-browser"]) {
    if (await runs(path, ["--version"])) return { path };
  }
  if (Deno.uid() !== 0 || !(await runs("apt-get", ["--version"]))) {
    return { reason: "chromium is not installed, and installing it needs apt-get and root" };
  }
  const install = ["install", "-y", "-qq", "--no-install-recommends", "chromium"];
  const apt = { timeoutMs: INSTALL_TIMEOUT_MS, env: { DEBIAN_FRONTEND: "noninteractive" } };
  // Package lists may be missing on a fresh machine: update only when a plain install fails.
  const installed = await runs("apt-get", install, apt) ||
    (await runs("apt-get", ["update", "-qq"], apt) && await runs("apt-get", install, apt));
  if (installed && await runs("chromium", ["--version"])) return { path: "chromium" };
  return { reason: "chromium is not installed and `apt-get install chromium` failed" };
}

/** Looked up once per test process, whichever test file imports it first. */
export const chromium = await findChromium();

/** The DOM Chromium builds from `html` once the page's scripts ran. */
export async function renderedDom(html: string): Promise<string> {
  if ("reason" in chromium) throw new Error(`No chromium: ${chromium.reason}`);
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/report.html`;
    await Deno.writeTextFile(file, html);
    const { stdout, success } = await new Deno.Command(chromium.path, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        `--user-data-dir=${dir}/profile`,
        "--dump-dom",
        `file://${file}`,
      ],
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(60_000),
    }).output();
    if (!success) throw new Error("chromium failed");
    return new TextDecoder().decode(stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The DOM without its scripts, which mention the same names as the marks. */
export const withoutScripts = (dom: string) => dom.replace(/<script[\s\S]*?<\/script>/g, "");

/** Marks per chart: circles with data-point, groups with data-bar. */
export function chartMarks(dom: string): Map<string, { points: number; bars: number }> {
  const out = new Map<string, { points: number; bars: number }>();
  for (
    const svg of withoutScripts(dom).matchAll(
      /<svg[^>]*data-chart="([a-z-]+)"[^>]*>([\s\S]*?)<\/svg>/g,
    )
  ) {
    out.set(svg[1], {
      points: svg[2].match(/<circle[^>]*data-point/g)?.length ?? 0,
      bars: svg[2].match(/<g[^>]*data-bar/g)?.length ?? 0,
    });
  }
  return out;
}
