import assert from "node:assert/strict";
import { describeLoadError } from "./server.ts";

const LIB = "/opt/tritonserver/lib/libtritonserver.so";

Deno.test("a missing system library is named with its Debian package", () => {
  // Deno's wording of a dlopen failure.
  const message = `Could not open library: Could not open library: libnuma.so.1: ` +
    "cannot open shared object file: No such file or directory";
  assert.equal(
    describeLoadError(LIB, message),
    `${LIB} needs the system library libnuma.so.1, which is not installed ` +
      "(Debian/Ubuntu: apt-get install libnuma1)",
  );
  assert.match(
    describeLoadError(LIB, message.replace("libnuma.so.1", "libfoo.so.7")),
    /needs the system library libfoo\.so\.7, which is not installed$/,
  );
});

Deno.test("other load failures keep the loader's first line", () => {
  assert.equal(
    describeLoadError(LIB, `${LIB}: invalid ELF header\nmore`),
    `Could not load ${LIB}: ${LIB}: invalid ELF header`,
  );
});
