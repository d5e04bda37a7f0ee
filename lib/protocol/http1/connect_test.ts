import assert from "node:assert/strict";
import { describeError } from "./connect.ts";

Deno.test("connection errors read as a clause: no OS error codes, no TLS library manual", () => {
  assert.equal(
    describeError(new Error("Connection refused (os error 111)")),
    "connection refused",
  );
  // What Triton's gRPC core does to a client without the certificate it requires (rustls's words).
  assert.equal(
    describeError(
      new Error(
        "peer closed connection without sending TLS close_notify: " +
          "https://docs.rs/rustls/latest/rustls/manual/_03_howto/index.html#unexpected-eof",
      ),
    ),
    "the server closed the TLS connection (as a server that requires a client certificate " +
      "does when none is sent)",
  );
  // Server certificates the TLS library refuses whatever the CA: its words, then what they mean.
  assert.match(
    describeError(new Error("invalid peer certificate: Other(OtherError(UnsupportedCertVersion))")),
    /^invalid peer certificate: .*UnsupportedCertVersion\)\) \(the server's certificate is not X\.509 v3/,
  );
  assert.match(
    describeError(new Error("invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))")),
    /\(the server presents a CA certificate, as openssl req -x509 makes, .*verify-peer 0/,
  );
});
