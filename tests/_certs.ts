/**
 * Certificates made at test time with openssl, for the TLS tests (the
 * reference server in tests/tls_test.ts, the real Triton in
 * tests/triton_test.ts): a CA, its server and client certificates, a second
 * CA and a certificate for another host.
 */

export interface Certificates {
  dir: string;
  path(name: string): string;
  read(name: string): string;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stderr: "piped", stdout: "null" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * A CA signing a localhost server certificate and a client certificate; a
 * second, unrelated CA; a server certificate for another host; certificates
 * the runtime's TLS library cannot use: an X.509 v1 client certificate (what
 * `openssl x509 -req` makes without an extensions file) and one with a
 * secp256k1 key, an X.509 v1 localhost server certificate; a self-signed
 * localhost server certificate.
 */
export async function makeCertificates(): Promise<Certificates> {
  const dir = await Deno.makeTempDir({ prefix: "inferperf_tls_" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const ca = async (name: string) =>
    await openssl(dir, [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    ]);
  const leaf = async (
    name: string,
    options: { cn: string; ext?: string; curve?: string },
  ) => {
    if (options.ext !== undefined) await Deno.writeTextFile(`${dir}/${name}.ext`, options.ext);
    await openssl(dir, [
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      `ec_paramgen_curve:${options.curve ?? "prime256v1"}`,
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      `/CN=${options.cn}`,
    ]);
    await openssl(dir, [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      ...(options.ext === undefined ? [] : ["-extfile", `${name}.ext`]),
    ]);
  };
  await ca("ca");
  await ca("other-ca");
  await leaf("server", {
    cn: "localhost",
    ext: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
  });
  await leaf("elsewhere", {
    cn: "elsewhere.invalid",
    ext: "subjectAltName=DNS:elsewhere.invalid\nextendedKeyUsage=serverAuth\n",
  });
  await leaf("client", { cn: "client", ext: "extendedKeyUsage=clientAuth\n" });
  await leaf("client-v1", { cn: "client" });
  await leaf("server-v1", { cn: "localhost" });
  await leaf("client-k1", {
    cn: "client",
    ext: "extendedKeyUsage=clientAuth\n",
    curve: "secp256k1",
  });
  await openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "self-signed.key",
    "-out",
    "self-signed.pem",
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost",
  ]);
  await openssl(dir, ["x509", "-in", "client.pem", "-outform", "DER", "-out", "client.der"]);
  await openssl(dir, [
    "pkcs8",
    "-topk8",
    "-nocrypt",
    "-in",
    "client.key",
    "-outform",
    "DER",
    "-out",
    "client-key.der",
  ]);
  return {
    dir,
    path: (name) => `${dir}/${name}`,
    read: (name) => Deno.readTextFileSync(`${dir}/${name}`),
  };
}
