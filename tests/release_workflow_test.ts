/**
 * .github/workflows/release.yml cannot run here, so its structure is checked:
 * the trigger, the compile matrix against tools/build.ts, the Linux smoke
 * tests, and what the release publishes.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import denoConfig from "../deno.json" with { type: "json" };
import { RELEASE_TARGETS } from "../tools/build.ts";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

interface Job {
  "runs-on": string;
  "timeout-minutes"?: number;
  needs?: string | string[];
  permissions?: Record<string, string>;
  strategy?: { matrix: Record<string, unknown> };
  steps: Step[];
}

interface Workflow {
  on: { push: { tags: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = parse(
  await Deno.readTextFile(new URL("../.github/workflows/release.yml", import.meta.url)),
) as Workflow;
const { jobs } = workflow;

function runs(job: Job): string {
  return job.steps.map((step) => step.run ?? "").join("\n");
}

Deno.test("release runs on version tags with read-only defaults", () => {
  assert.deepEqual(workflow.on.push.tags, ["v*"]);
  assert.deepEqual(workflow.permissions, { contents: "read" });
  assert.match(runs(jobs.test), /require\("\.\/deno\.json"\)\.version/);
  assert.match(runs(jobs.test), /bash \.ci\/run/);
  for (const [name, job] of Object.entries(jobs)) {
    assert.ok(job["timeout-minutes"], `job "${name}" has a timeout`);
    for (const step of job.steps) {
      if (step.uses) assert.match(step.uses, /^[\w-]+\/[\w-]+@v\d+$/, `job "${name}"`);
    }
  }
});

Deno.test("build compiles every release target with the compile task", () => {
  assert.deepEqual(jobs.build.strategy?.matrix.target, RELEASE_TARGETS);
  assert.match(runs(jobs.build), /deno task compile --target \$\{\{ matrix\.target \}\}/);
  assert.ok(denoConfig.tasks.compile.includes("tools/build.ts compile"));
  assert.ok(denoConfig.tasks.bundle.includes("tools/build.ts bundle"));
  assert.match(runs(jobs.bundle), /deno task bundle/);
});

Deno.test("each Linux binary is smoke-tested on its own architecture", () => {
  const smoke = jobs.smoke;
  assert.equal(smoke.needs, "build");
  assert.equal(smoke["runs-on"], "${{ matrix.runner }}");
  const include = smoke.strategy?.matrix.include as Array<{ target: string; runner: string }>;
  const linux = RELEASE_TARGETS.filter((target) => target.includes("linux"));
  assert.deepEqual(include.map((entry) => entry.target).sort(), [...linux].sort());
  assert.ok(include.every((entry) => entry.runner.startsWith("ubuntu-")));
  assert.equal(
    include.find((entry) => entry.target.startsWith("aarch64"))?.runner,
    "ubuntu-24.04-arm",
  );
  // No checkout: the binary must run without the repository or a toolchain.
  assert.ok(smoke.steps.every((step) => step.uses !== "actions/checkout@v4"));
  const script = runs(smoke);
  assert.match(script, /\.\/inferperf --version/);
  assert.match(script, /\.\/inferperf demo /);
  assert.match(script, /\.\/inferperf serve /);
  assert.match(script, /\.\/inferperf -m simple -u 127\.0\.0\.1:8000 /);
});

Deno.test("release publishes binaries, bundle and SHA-256 checksums after all checks", () => {
  const release = jobs.release;
  assert.deepEqual(release.needs, ["test", "build", "bundle", "smoke"]);
  assert.deepEqual(release.permissions, { contents: "write" });
  const download = release.steps.find((step) => step.uses === "actions/download-artifact@v4");
  assert.deepEqual(download?.with, {
    pattern: "inferperf-*",
    "merge-multiple": true,
    path: "dist",
  });
  const uploaded = [jobs.build, jobs.bundle].map((job) =>
    job.steps.find((step) => step.uses === "actions/upload-artifact@v4")?.with?.name
  );
  assert.deepEqual(uploaded, ["inferperf-${{ matrix.target }}", "inferperf-js"]);
  const script = runs(release);
  assert.match(script, /sha256sum inferperf\* > SHA256SUMS/);
  assert.match(script, /gh release create "\$GITHUB_REF_NAME" dist\/\*/);
});
