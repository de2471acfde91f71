/**
 * A certificate authority and a server certificate signed by it, made in process for
 * `FakeCluster.serve({ tls: "self-signed" })`, as a cluster's own CA signs its API server's
 * certificate: the CA goes into the kubeconfig, the server presents its certificate, and
 * every client (kubectl, client-node, this library) verifies it as it would a real cluster's.
 *
 * Node makes and signs keys (`node:crypto`) but writes no certificates, and no command may be
 * assumed on the user's machine (no `openssl` on Windows), so the few DER structures of an
 * X.509 v3 certificate (RFC 5280) are written here: P-256 keys, ECDSA with SHA-256, the
 * extensions a TLS client checks (basic constraints, key usage, extended key usage, subject
 * alternative names).
 *
 * @internal
 */
import * as Crypto from "node:crypto"
import * as Net from "node:net"

const der = (tag: number, content: Uint8Array): Uint8Array => {
  const length = content.length
  const head = length < 0x80
    ? [length]
    : length < 0x100
    ? [0x81, length]
    : length < 0x10000
    ? [0x82, length >> 8, length & 0xff]
    : [0x83, length >> 16, (length >> 8) & 0xff, length & 0xff]
  return Buffer.concat([Buffer.from([tag, ...head]), content])
}

const sequence = (...items: ReadonlyArray<Uint8Array>) => der(0x30, Buffer.concat(items))
const set = (...items: ReadonlyArray<Uint8Array>) => der(0x31, Buffer.concat(items))
const explicit = (n: number, content: Uint8Array) => der(0xa0 + n, content)
const octets = (content: Uint8Array) => der(0x04, content)
const bits = (content: Uint8Array, unused = 0) => der(0x03, Buffer.concat([Buffer.from([unused]), content]))
const utf8 = (text: string) => der(0x0c, Buffer.from(text, "utf8"))
const booleanTrue = der(0x01, Buffer.from([0xff]))

/** A non-negative INTEGER from big-endian bytes, minimally encoded as DER requires. */
const integer = (bytes: Uint8Array): Uint8Array => {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0 && (bytes[start + 1]! & 0x80) === 0) start++
  const trimmed = bytes.subarray(start)
  return der(0x02, (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed)
}

const oid = (dotted: string): Uint8Array => {
  const [first, second, ...rest] = dotted.split(".").map(Number)
  const out: Array<number> = [first! * 40 + second!]
  for (const arc of rest) {
    const chunk: Array<number> = [arc & 0x7f]
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80)
    out.push(...chunk)
  }
  return der(0x06, Buffer.from(out))
}

/** UTCTime for the years it covers (to 2049), GeneralizedTime after, as RFC 5280 asks. */
const time = (date: Date): Uint8Array => {
  const iso = date.toISOString().replace(/[-:T]/g, "").slice(0, 14)
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`))
}

const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"))
const commonName = (cn: string) => sequence(set(sequence(oid("2.5.4.3"), utf8(cn))))
const extension = (id: string, critical: boolean, value: Uint8Array) =>
  sequence(oid(id), ...(critical ? [booleanTrue] : []), octets(value))

/** A subject alternative name: an IP address (`[7]`) or a DNS name (`[2]`). */
const alternativeName = (name: string): Uint8Array => {
  if (Net.isIPv4(name)) return der(0x87, Buffer.from(name.split(".").map(Number)))
  if (Net.isIPv6(name)) {
    const halves = name.split("::")
    const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":"))
    const head = groups(halves[0])
    const tail = groups(halves[1])
    const all = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail]
    return der(0x87, Buffer.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])))
  }
  return der(0x82, Buffer.from(name, "ascii"))
}

interface Issued {
  readonly cert: string
  readonly key: Crypto.KeyObject
}

const issue = (options: {
  readonly subject: string
  readonly issuer: string
  readonly extensions: ReadonlyArray<Uint8Array>
  readonly signer?: Crypto.KeyObject | undefined
}): Issued => {
  const { privateKey, publicKey } = Crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
  const serial = Crypto.randomBytes(16)
  serial[0]! &= 0x7f
  serial[0]! |= 0x01
  const now = Date.now()
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ecdsaWithSha256,
    commonName(options.issuer),
    // an hour back, for a clock a little behind; ten years on, longer than any test runs
    sequence(time(new Date(now - 3_600_000)), time(new Date(now + 10 * 365 * 86_400_000))),
    commonName(options.subject),
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...options.extensions))
  )
  const signature = Crypto.sign("sha256", tbs, options.signer ?? privateKey)
  const body = Buffer.from(sequence(tbs, ecdsaWithSha256, bits(signature))).toString("base64")
  const lines = body.match(/.{1,64}/g) ?? []
  return { cert: `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`, key: privateKey }
}

/**
 * A new CA and a server certificate it signed, valid for `localhost`, `127.0.0.1`, `::1`
 * and `host`: PEM texts, the key in PKCS #8.
 */
export const selfSigned = (host: string): { readonly cert: string; readonly key: string; readonly ca: string } => {
  const caName = "effect-kube FakeCluster CA"
  const ca = issue({
    subject: caName,
    issuer: caName,
    extensions: [
      extension("2.5.29.19", true, sequence(booleanTrue)), // basicConstraints: CA
      extension("2.5.29.15", true, bits(Buffer.from([0x06]), 1)) // keyUsage: keyCertSign, cRLSign
    ]
  })
  const names = [...new Set(["localhost", "127.0.0.1", "::1", host])]
  const server = issue({
    subject: "fake-cluster-apiserver",
    issuer: caName,
    signer: ca.key,
    extensions: [
      extension("2.5.29.19", true, sequence()), // basicConstraints: not a CA
      extension("2.5.29.15", true, bits(Buffer.from([0x80]), 7)), // keyUsage: digitalSignature
      extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))), // extKeyUsage: serverAuth
      extension("2.5.29.17", false, sequence(...names.map(alternativeName))) // subjectAltName
    ]
  })
  return {
    cert: server.cert,
    key: server.key.export({ type: "pkcs8", format: "pem" }) as string,
    ca: ca.cert
  }
}
