import assert from "node:assert/strict";
import { certificateVersion, derKeyLabel } from "./tls.ts";

Deno.test("certificateVersion reads TBSCertificate's optional [0] version", () => {
  // Certificate { TBSCertificate { [0] { INTEGER 2 }, serialNumber 1 } }: X.509 v3.
  assert.equal(certificateVersion(Uint8Array.of(0x30, 10, 0x30, 8, 0xa0, 3, 2, 1, 2, 2, 1, 1)), 3);
  // An explicit version 0, and none at all (DEFAULT v1: what openssl x509 -req makes without
  // an extensions file), are both v1.
  assert.equal(certificateVersion(Uint8Array.of(0x30, 10, 0x30, 8, 0xa0, 3, 2, 1, 0, 2, 1, 1)), 1);
  assert.equal(certificateVersion(Uint8Array.of(0x30, 5, 0x30, 3, 2, 1, 1)), 1);
  // Long-form lengths are skipped whole.
  const long = Uint8Array.of(0x30, 0x81, 10, 0x30, 0x82, 0, 8, 0xa0, 3, 2, 1, 2, 2, 1, 1);
  assert.equal(certificateVersion(long), 3);
  // Not a certificate: 0.
  for (const bytes of [Uint8Array.of(), Uint8Array.of(0x30), Uint8Array.of(0x30, 2, 0xa0, 0)]) {
    assert.equal(certificateVersion(bytes), 0);
  }
});

Deno.test("derKeyLabel tells PKCS#8, PKCS#1 and SEC1 keys apart", () => {
  assert.equal(derKeyLabel(Uint8Array.of(0x30, 5, 2, 1, 0, 0x30, 0)), "PRIVATE KEY");
  assert.equal(derKeyLabel(Uint8Array.of(0x30, 5, 2, 1, 0, 2, 0)), "RSA PRIVATE KEY");
  assert.equal(derKeyLabel(Uint8Array.of(0x30, 5, 2, 1, 1, 4, 0)), "EC PRIVATE KEY");
  assert.throws(() => derKeyLabel(Uint8Array.of(1, 2, 3, 4)), /not a DER key/);
});
