/**
 * A throw-away PKI for TLS tests, made with the `openssl` CLI: a CA, server
 * certificates signed by it and client certificates signed by it. Generated once per
 * test process (key generation is the slow part) in a temp directory, read into memory,
 * and the directory removed at once, keys first: no key is left on disk, whether the
 * worker exits or not (vitest's workers never reach process "exit"). A test that needs one
 * as a file writes it into its own temp directory and removes it in its own teardown.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export interface KeyPair {
  /** PEM certificate. */
  readonly cert: string
  /** PEM private key. */
  readonly key: string
}

export interface Pki {
  readonly ca: KeyPair
  /** For `localhost` and `127.0.0.1`. */
  readonly server: KeyPair
  /** For `kube.internal.test` only: checks that `tls-server-name` is used. */
  readonly namedServer: KeyPair
  /** The name `namedServer` is valid for. */
  readonly serverName: string
  /** CN=test-user. */
  readonly client: KeyPair
  /** CN=test-user-2. */
  readonly client2: KeyPair
  /** A second CA: trusting it must not verify the server. */
  readonly otherCa: KeyPair
  /** For `localhost` and `127.0.0.1`, signed by `otherCa`: a third party that is not the cluster. */
  readonly otherServer: KeyPair
  /** For `localhost` and `127.0.0.1`, signed by `ca`, expired (its notAfter a day before its notBefore). */
  readonly expiredServer: KeyPair
}

const serverName = "kube.internal.test"

let cached: Pki | undefined

const openssl = (dir: string, args: ReadonlyArray<string>): void => {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] })
}

const read = (dir: string, name: string): KeyPair => ({
  cert: Fs.readFileSync(Path.join(dir, `${name}.crt`), "utf8"),
  key: Fs.readFileSync(Path.join(dir, `${name}.key`), "utf8")
})

const selfSigned = (dir: string, name: string, cn: string) =>
  openssl(dir, [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", `${name}.key`, "-out", `${name}.crt`, "-days", "3650", "-subj", `/CN=${cn}`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
  ])

const signed = (dir: string, name: string, cn: string, extensions: string, issuer = "ca", days = 3650) => {
  openssl(dir, [
    "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`
  ])
  Fs.writeFileSync(Path.join(dir, `${name}.ext`), extensions)
  openssl(dir, [
    "x509", "-req", "-in", `${name}.csr`, "-CA", `${issuer}.crt`, "-CAkey", `${issuer}.key`, "-CAcreateserial",
    "-out", `${name}.crt`, "-days", String(days), "-extfile", `${name}.ext`
  ])
}

/** The PKI of this test process, generated on first use. */
export const pki = (): Pki => {
  if (cached !== undefined) return cached
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-pki-"))
  try {
    cached = generate(dir)
  } finally {
    removeKeysFirst(dir)
  }
  return cached
}

/** Removes a directory, its private keys before anything else, so that an interrupted removal leaves no key. */
export const removeKeysFirst = (dir: string): void => {
  const files = Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
  for (const file of files) if (file.endsWith(".key")) Fs.rmSync(Path.join(dir, file), { force: true })
  Fs.rmSync(dir, { recursive: true, force: true })
}

const generate = (dir: string): Pki => {
  selfSigned(dir, "ca", "effect-kube test CA")
  selfSigned(dir, "other-ca", "effect-kube other CA")
  signed(
    dir,
    "server",
    "localhost",
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
  )
  signed(dir, "named-server", serverName, `subjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\n`)
  signed(dir, "client", "test-user", "extendedKeyUsage=clientAuth\n")
  signed(dir, "client2", "test-user-2", "extendedKeyUsage=clientAuth\n")
  signed(
    dir,
    "other-server",
    "localhost",
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    "other-ca"
  )
  signed(
    dir,
    "expired-server",
    "localhost",
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    "ca",
    -1
  )
  return {
    ca: read(dir, "ca"),
    server: read(dir, "server"),
    namedServer: read(dir, "named-server"),
    serverName,
    client: read(dir, "client"),
    client2: read(dir, "client2"),
    otherCa: read(dir, "other-ca"),
    otherServer: read(dir, "other-server"),
    expiredServer: read(dir, "expired-server")
  }
}
