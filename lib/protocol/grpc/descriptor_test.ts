import assert from "node:assert/strict";
import { DESCRIPTOR_MODULE, generateDescriptorModule } from "../../../proto/generate.ts";

Deno.test("the embedded descriptor matches proto/ (run `deno task proto` after editing it)", () => {
  assert.equal(
    Deno.readTextFileSync(DESCRIPTOR_MODULE),
    generateDescriptorModule(),
    "lib/protocol/grpc/_descriptor.ts is stale: run `deno task proto`",
  );
});
