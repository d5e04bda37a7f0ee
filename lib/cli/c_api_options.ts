/**
 * What --service-kind triton_c_api needs on the command line: the Triton
 * install and the model repository of the in-process server, and none of
 * the network options, which would silently do nothing.
 */

/** The part of config.ts's option reader these checks use. */
interface OptionReader {
  readonly errors: string[];
  has(name: string): boolean;
}

/** Options that only reach a server over the network. */
const NETWORK_OPTIONS = [
  "url",
  "protocol",
  "header",
  "grpc-compression-algorithm",
  "ssl-grpc-use-ssl",
  "ssl-grpc-root-certifications-file",
  "ssl-grpc-private-key-file",
  "ssl-grpc-certificate-chain-file",
  "ssl-https-verify-peer",
  "ssl-https-verify-host",
  "ssl-https-ca-certificates-file",
  "ssl-https-client-certificate-file",
  "ssl-https-client-certificate-type",
  "ssl-https-private-key-file",
  "ssl-https-private-key-type",
  "input-tensor-format",
  "output-tensor-format",
];

/** Usage errors of a triton_c_api run (pushed to `r.errors`). */
export function checkCApiOptions(r: OptionReader): void {
  for (
    const [name, what] of [
      ["triton-server-directory", "DIR (a Triton install: DIR/lib/libtritonserver.so)"],
      ["model-repository", "DIR (the model repository the in-process server loads)"],
    ]
  ) {
    if (!r.has(name)) r.errors.push(`--service-kind triton_c_api needs --${name} ${what}`);
  }
  const network = NETWORK_OPTIONS.filter((name) => r.has(name)).map((name) => `--${name}`);
  if (network.length > 0) {
    r.errors.push(
      `Options ${network.join(", ")} do not apply to --service-kind triton_c_api: ` +
        "requests go to the in-process server, not over a network",
    );
  }
}

/** Options of triton_c_api given with another service kind. */
export function checkCApiOnly(r: OptionReader): void {
  const given = ["triton-server-directory", "model-repository"].filter((name) => r.has(name));
  if (given.length > 0) {
    r.errors.push(
      `Options ${given.map((name) => `--${name}`).join(", ")} apply to ` +
        "--service-kind triton_c_api only",
    );
  }
}
