/**
 * TLS end to end with certificates made at test time (openssl): gRPC with
 * --ssl-grpc-* against the reference server (TLS and mutual TLS), HTTPS with
 * --ssl-https-* through a TLS proxy in front of its HTTP front end. A wrong
 * CA, a wrong host name and a missing client certificate fail clearly.
 */
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { runCli } from "./_helpers.ts";
import { makeCertificates } from "./_certs.ts";
import { type RunningServer, startServerInWorker } from "../lib/server/mod.ts";

const certs = await makeCertificates();

async function withGrpcTls<T>(
  options: { cert: string; key: string; mutual?: boolean },
  fn: (server: RunningServer) => Promise<T>,
): Promise<T> {
  const server = await startServerInWorker({
    grpcTls: {
      cert: certs.read(options.cert),
      key: certs.read(options.key),
      ...(options.mutual ? { clientCaCerts: [certs.read("ca.pem")] } : {}),
    },
  });
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

const RUN = ["-m", "simple", "--request-count", "20"];

function grpcArgs(server: RunningServer, ...extra: string[]): string[] {
  return [
    ...RUN,
    "-i",
    "grpc",
    "-u",
    `localhost:${server.grpcPort}`,
    "--ssl-grpc-use-ssl",
    ...extra,
  ];
}

Deno.test("gRPC over TLS: the root certificate option, a wrong CA, a wrong host name", async () => {
  await withGrpcTls({ cert: "server.pem", key: "server.key" }, async (server) => {
    const ok = await runCli(
      grpcArgs(server, "--ssl-grpc-root-certifications-file", certs.path("ca.pem")),
    );
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
    assert.match(ok.stdout, /Avg gRPC time/);
    const wrongCa = await runCli(
      grpcArgs(server, "--ssl-grpc-root-certifications-file", certs.path("other-ca.pem")),
    );
    assert.equal(wrongCa.code, 3);
    assert.match(
      wrongCa.stderr,
      /Cannot connect to "localhost:\d+": TLS handshake failed: .*UnknownIssuer/,
    );
  });
  await withGrpcTls({ cert: "elsewhere.pem", key: "elsewhere.key" }, async (server) => {
    const wrongHost = await runCli(
      grpcArgs(server, "--ssl-grpc-root-certifications-file", certs.path("ca.pem")),
    );
    assert.equal(wrongHost.code, 3);
    assert.match(wrongHost.stderr, /TLS handshake failed: .*not valid for name "localhost"/);
  });
});

Deno.test("gRPC over mutual TLS: the client certificate chain and key options", async () => {
  await withGrpcTls({ cert: "server.pem", key: "server.key", mutual: true }, async (server) => {
    const root = ["--ssl-grpc-root-certifications-file", certs.path("ca.pem")];
    const ok = await runCli(grpcArgs(
      server,
      ...root,
      "--ssl-grpc-certificate-chain-file",
      certs.path("client.pem"),
      "--ssl-grpc-private-key-file",
      certs.path("client.key"),
    ));
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
    const anonymous = await runCli(grpcArgs(server, ...root));
    assert.equal(anonymous.code, 3);
    assert.match(anonymous.stderr, /CertificateRequired|certificate required/i);
    // What the runtime's TLS library cannot use is one line naming the file, never a panic.
    const identity = (cert: string, key: string) =>
      runCli(grpcArgs(
        server,
        ...root,
        "--ssl-grpc-certificate-chain-file",
        certs.path(cert),
        "--ssl-grpc-private-key-file",
        certs.path(key),
      ));
    const refusals: Array<[string, string, RegExp]> = [
      [
        "client-v1.pem",
        "client-v1.key",
        /^error: "[^"]*client-v1\.pem" \(--ssl-grpc-certificate-chain-file\) is an X\.509 v1 certificate; the TLS library needs X\.509 v3/,
      ],
      [
        "client-k1.pem",
        "client-k1.key",
        /^error: "[^"]*client-k1\.key" \(--ssl-grpc-private-key-file\) is an EC secp256k1 key; the TLS library signs with RSA of 2048 bits or more, ECDSA/,
      ],
      [
        "client.pem",
        "server.key",
        /^error: "[^"]*server\.key" \(--ssl-grpc-private-key-file\) is not the key of the certificate "[^"]*client\.pem"/,
      ],
    ];
    for (const [cert, key, message] of refusals) {
      const run = await identity(cert, key);
      assert.equal(run.code, 1, run.stderr + run.stdout);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /panicked/);
    }
  });
});

/** A TLS proxy in front of the reference server's HTTP front end (Triton's HTTP has no TLS). */
async function withHttpsProxy<T>(
  options: { cert: string; key: string; mutual: boolean },
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const backend = await startServerInWorker();
  const sockets = new Set<net.Socket>();
  const proxy = tls.createServer({
    cert: certs.read(options.cert),
    key: certs.read(options.key),
    ...(options.mutual
      ? { ca: [certs.read("ca.pem")], requestCert: true, rejectUnauthorized: true }
      : {}),
  }, (socket) => {
    const upstream = net.connect(backend.httpPort, "127.0.0.1");
    sockets.add(socket);
    sockets.add(upstream);
    socket.pipe(upstream).pipe(socket);
    const drop = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on("error", drop);
    upstream.on("error", drop);
    socket.on("close", drop);
    upstream.on("close", drop);
  });
  proxy.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()));
  const port = (proxy.address() as net.AddressInfo).port;
  try {
    return await fn(`https://localhost:${port}`);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await backend.close();
  }
}

Deno.test("HTTPS: CA file, client certificate and key (PEM and DER), verify-host, verify-peer", async () => {
  await withHttpsProxy({ cert: "server.pem", key: "server.key", mutual: true }, async (url) => {
    const ca = ["--ssl-https-ca-certificates-file", certs.path("ca.pem")];
    const pem = await runCli([
      ...RUN,
      "-u",
      url,
      ...ca,
      "--ssl-https-client-certificate-file",
      certs.path("client.pem"),
      "--ssl-https-private-key-file",
      certs.path("client.key"),
    ]);
    assert.equal(pem.code, 0, pem.stderr + pem.stdout);
    const der = await runCli([
      ...RUN,
      "-u",
      url,
      ...ca,
      "--ssl-https-client-certificate-file",
      certs.path("client.der"),
      "--ssl-https-client-certificate-type",
      "DER",
      "--ssl-https-private-key-file",
      certs.path("client-key.der"),
      "--ssl-https-private-key-type",
      "DER",
    ]);
    assert.equal(der.code, 0, der.stderr + der.stdout);
    const noCert = await runCli([...RUN, "-u", url, ...ca]);
    assert.equal(noCert.code, 3);
    const v1 = await runCli([
      ...RUN,
      "-u",
      url,
      ...ca,
      "--ssl-https-client-certificate-file",
      certs.path("client-v1.pem"),
      "--ssl-https-private-key-file",
      certs.path("client-v1.key"),
    ]);
    assert.equal(v1.code, 1, v1.stderr + v1.stdout);
    assert.match(
      v1.stderr,
      /^error: "[^"]*client-v1\.pem" \(--ssl-https-client-certificate-file\) is an X\.509 v1 certificate/,
    );
    assert.doesNotMatch(v1.stderr, /panicked/);
  });
  // Servers whose certificate Deno's own TLS never accepts: self-signed (openssl req -x509 makes
  // a CA certificate) or X.509 v1. The error says why; --ssl-https-verify-peer 0 connects
  // through node:tls.
  const refused: Array<[string, string[], RegExp]> = [
    ["self-signed", [], /the server presents a CA certificate, as openssl req -x509 makes/],
    ["server-v1", ["--ssl-https-ca-certificates-file", certs.path("ca.pem")], /not X\.509 v3/],
  ];
  for (const [name, ca, why] of refused) {
    await withHttpsProxy(
      { cert: `${name}.pem`, key: `${name}.key`, mutual: false },
      async (url) => {
        const strict = await runCli([...RUN, "-u", url, ...ca]);
        assert.equal(strict.code, 3);
        assert.match(strict.stderr, /TLS handshake failed: invalid peer certificate/);
        assert.match(strict.stderr, why);
        const unverified = await runCli([...RUN, "-u", url, "--ssl-https-verify-peer", "0"]);
        assert.equal(unverified.code, 0, unverified.stderr + unverified.stdout);
        assert.match(unverified.stdout, /Request count: 20/);
      },
    );
  }
  await withHttpsProxy(
    { cert: "elsewhere.pem", key: "elsewhere.key", mutual: false },
    async (url) => {
      const ca = ["--ssl-https-ca-certificates-file", certs.path("ca.pem")];
      const strict = await runCli([...RUN, "-u", url, ...ca]);
      assert.equal(strict.code, 3);
      assert.match(strict.stderr, /not valid for name "localhost"/);
      const lax = await runCli([...RUN, "-u", url, ...ca, "--ssl-https-verify-host", "0"]);
      assert.equal(lax.code, 0, lax.stderr + lax.stdout);
      // Without the chain check the name is still checked, as curl does for perf_analyzer.
      const peer = ["--ssl-https-verify-peer", "0"];
      const named = await runCli([...RUN, "-u", url, ...peer]);
      assert.equal(named.code, 3);
      assert.match(named.stderr, /Host: localhost\. is not in the cert's altnames/);
      const neither = await runCli([...RUN, "-u", url, ...peer, "--ssl-https-verify-host", "0"]);
      assert.equal(neither.code, 0, neither.stderr + neither.stdout);
    },
  );
});

Deno.test("certificate files are removed", async () => {
  await Deno.remove(certs.dir, { recursive: true });
});
