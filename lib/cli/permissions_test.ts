import assert from "node:assert/strict";
import {
  findMissingPermission,
  formatMissingPermission,
  type MissingPermission,
  permissionFlag,
} from "./permissions.ts";

async function refusal(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("Expected a permission error");
}

Deno.test({
  name: "findMissingPermission reads Deno's own NotCapable errors",
  permissions: { net: false },
  async fn() {
    const error = await refusal(() => Deno.connect({ hostname: "127.0.0.1", port: 9 }));
    assert.ok(error instanceof Deno.errors.NotCapable);
    assert.deepEqual(findMissingPermission(error), {
      name: "net",
      resource: "127.0.0.1:9",
      compiled: false,
    });
  },
});

Deno.test("findMissingPermission finds the refusal in a cause or a bare message", () => {
  const denied = new Deno.errors.NotCapable(
    'Requires net access to "127.0.0.1:8001", run again with the --allow-net flag',
  );
  const wrapped = new Error('Cannot connect to "127.0.0.1:8001": requires net access', {
    cause: denied,
  });
  const expected = { name: "net", resource: "127.0.0.1:8001", compiled: false };
  assert.deepEqual(findMissingPermission(wrapped), expected);
  // What a Web Worker reports back: only the text survives.
  assert.deepEqual(findMissingPermission(new Error(denied.message)), expected);
  assert.equal(findMissingPermission(new Error("Connection refused")), undefined);
  assert.equal(findMissingPermission("Requires net access"), undefined);
});

Deno.test("findMissingPermission reads compiled-binary wording and unnamed resources", () => {
  const compiled = new Error(
    'Requires write access to "out.csv", specify the required permissions during compilation using `deno compile --allow-write`',
  );
  assert.deepEqual(findMissingPermission(compiled), {
    name: "write",
    resource: "out.csv",
    compiled: true,
  });
  const bare = new Error("Requires sys access, run again with the --allow-sys flag");
  assert.deepEqual(findMissingPermission(bare), { name: "sys", compiled: false });
  const escaped = new Error(
    'Requires read access to "dir \\"a\\"/x.json", run again with the --allow-read flag',
  );
  assert.equal(findMissingPermission(escaped)?.resource, 'dir "a"/x.json');
});

Deno.test("permissionFlag grants exactly the resource and quotes for the shell", () => {
  const flag = (name: string, resource?: string) =>
    permissionFlag({ name, compiled: false, ...(resource ? { resource } : {}) });
  assert.equal(flag("net", "127.0.0.1:8000"), "--allow-net=127.0.0.1:8000");
  assert.equal(flag("read", "/data/input.json"), "--allow-read=/data/input.json");
  assert.equal(flag("net", "[::1]:8000"), "'--allow-net=[::1]:8000'");
  assert.equal(flag("net", "127.0.0.1:0"), "--allow-net=127.0.0.1", "any port the system picks");
  assert.equal(flag("write", "it's here.csv"), "'--allow-write=it'\\''s here.csv'");
  assert.equal(flag("sys"), "--allow-sys");
  assert.equal(flag("read", "<CWD>"), "--allow-read");
});

Deno.test("formatMissingPermission is one line naming the resource and the flag", () => {
  const missing: MissingPermission = { name: "net", resource: "localhost:8000", compiled: false };
  assert.equal(
    formatMissingPermission(missing),
    'Permission denied: net access to "localhost:8000"; run again with --allow-net=localhost:8000',
  );
  assert.equal(
    formatMissingPermission({ name: "env", resource: "HOME", compiled: true }),
    'Permission denied: env access to "HOME"; this binary was compiled without --allow-env=HOME',
  );
});
