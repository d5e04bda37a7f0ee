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
    const peer = await runCli([...RUN, "-u", url, ...ca, "--ssl-https-verify-peer", "0"]);
    assert.equal(peer.code, 1);
    assert.match(peer.stderr, /--ssl-https-verify-peer is not supported: Deno always verifies/);
  });
  await withHttpsProxy(
    { cert: "elsewhere.pem", key: "elsewhere.key", mutual: false },
    async (url) => {
      const ca = ["--ssl-https-ca-certificates-file", certs.path("ca.pem")];
      const strict = await runCli([...RUN, "-u", url, ...ca]);
      assert.equal(strict.code, 3);
      assert.match(strict.stderr, /not valid for name "localhost"/);
      const lax = await runCli([...RUN, "-u", url, ...ca, "--ssl-https-verify-host", "0"]);
      assert.equal(lax.code, 0, lax.stderr + lax.stdout);
    },
  );
});

Deno.test("certificate files are removed", async () => {
  await Deno.remove(certs.dir, { recursive: true });
});
