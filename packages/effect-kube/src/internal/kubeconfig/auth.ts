/**
 * Auth providers: static credentials, a token file that is re-read when it changes, and
 * exec plugins whose output is cached until it expires.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Redacted from "effect/Redacted"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { KubeConfigError } from "../../Errors.js"
import { concatBytes } from "../stream/lines.js"
import type { AuthProvider, Credentials } from "../../KubeConfig.js"
import type { Mapping, Where } from "./fields.js"
import { errnoCode, fail, isMapping, isNotFound, platformCode, readBounded, tooLarge } from "./fields.js"

/** Credentials that never change: `invalidate` says a retry would not help. @internal */
export const fixed = (kind: string, credentials: Credentials): AuthProvider => ({
  kind,
  credentials: Effect.succeed(credentials),
  invalidate: Effect.succeed(false)
})

/** No credentials at all (anonymous, or a transport that authenticates by itself). @internal */
export const none: AuthProvider = fixed("none", {})

/** Adds a client certificate from the kubeconfig, unless the provider itself gave one. @internal */
export const withClientCertificate = (
  provider: AuthProvider,
  clientCertificate: NonNullable<Credentials["clientCertificate"]>
): AuthProvider => ({
  kind: provider.kind,
  credentials: Effect.map(
    provider.credentials,
    (credentials) => credentials.clientCertificate !== undefined ? credentials : { ...credentials, clientCertificate }
  ),
  invalidate: provider.invalidate
})

/**
 * How long a token read from a file is used before the file is checked again. client-go
 * re-reads each minute; a few seconds see a rotation sooner for the cost of one `stat`,
 * and a 401 makes the next request read the file at once (`invalidate`).
 *
 * @internal
 */
export const tokenFileRecheckMillis = 5_000

/**
 * A bearer token read from a file, because projected service-account tokens are rotated
 * in place. The file is checked (its inode, size and modification time) at most every
 * `tokenFileRecheckMillis`, not on every request, and read again only when it changed.
 *
 * @internal
 */
export const tokenFile = (
  path: string,
  where: Where,
  field: string
): Effect.Effect<AuthProvider, never, FileSystem.FileSystem> =>
  Effect.map(FileSystem.FileSystem, (fs) => {
    let cached:
      | { readonly stamp: string; readonly credentials: Credentials; readonly checkedAt: number }
      | undefined
    const failWith = (detail: string, cause?: unknown) =>
      new KubeConfigError({ source: where.source, context: where.context, field, detail, cause })
    const fresh = (now: number) =>
      cached !== undefined && now >= cached.checkedAt && now - cached.checkedAt < tokenFileRecheckMillis
    const recheck = (now: number) => Effect.gen(function*() {
      const stat = yield* Effect.mapError(
        fs.stat(path),
        (cause) => failWith(`cannot read the token file ${path}: ${platformCode(cause)}`, cause)
      )
      const stamp = `${Option.getOrElse(stat.ino, () => "")}:${stat.size}:${
        Option.getOrElse(Option.map(stat.mtime, (d) => d.getTime()), () => "")
      }`
      if (cached !== undefined && cached.stamp === stamp) {
        cached = { ...cached, checkedAt: now }
        return cached.credentials
      }
      const bytes = yield* Effect.mapError(
        readBounded(fs, path),
        (cause) => failWith(`cannot read the token file ${path}: ${platformCode(cause)}`, cause)
      )
      if (bytes === undefined) return yield* Effect.fail(failWith(`the token file ${path} ${tooLarge}`))
      const token = new TextDecoder().decode(bytes).trim()
      if (token === "") return yield* Effect.fail(failWith(`the token file ${path} is empty`))
      cached = { stamp, credentials: { token: Redacted.make(token) }, checkedAt: now }
      return cached.credentials
    })
    // Every request asks: while the file was checked less than 5 s ago, that is a clock read, no generator.
    const credentials = Effect.clockWith((clock) => {
      const now = clock.currentTimeMillisUnsafe()
      return fresh(now) ? Effect.succeed(cached!.credentials) : recheck(now)
    })
    return {
      kind: "tokenFile",
      credentials,
      invalidate: Effect.sync(() => {
        cached = undefined
        return true
      })
    }
  })

/** The exec credential API versions this client speaks. @internal */
export const execApiVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"] as const

/** @internal */
export type ExecApiVersion = (typeof execApiVersions)[number]

/** A resolved `users[].user.exec` entry. @internal */
export interface ExecSpec {
  readonly where: Where
  /** e.g. `users[admin].user.exec`. */
  readonly field: string
  readonly apiVersion: ExecApiVersion
  /** The command as written (for messages). */
  readonly commandName: string
  /** The command to run: resolved against the kubeconfig's directory when it names a path. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: ReadonlyArray<readonly [string, string]>
  /** `spec.cluster` of `KUBERNETES_EXEC_INFO`, when `provideClusterInfo` is set. */
  readonly cluster?: Mapping | undefined
  readonly installHint?: string | undefined
}

const maxOutput = 1024 * 1024

/**
 * Runs the plugin once, in the user's environment (`process.env`) with the kubeconfig's
 * `env` entries over it and `KUBERNETES_EXEC_INFO` set by us, as client-go does. Its
 * stdin is at end of file at once (it runs non-interactively) and its stderr goes to
 * ours, as with kubectl, so that a plugin can tell the user why it failed. Failures name
 * the command and the exit code only: arguments and output may hold secrets (the
 * platform's own error quotes the command line, so it is not kept).
 *
 * @internal
 */
const run = (
  spawner: ChildProcessSpawner.ChildProcessSpawner["Service"],
  spec: ExecSpec
): Effect.Effect<string, KubeConfigError> =>
  Effect.scoped(Effect.gen(function*() {
    const failWith = (detail: string) => fail(spec.where, spec.field, detail)
    const execInfo = {
      apiVersion: spec.apiVersion,
      kind: "ExecCredential",
      spec: spec.cluster !== undefined ? { interactive: false, cluster: spec.cluster } : { interactive: false }
    }
    const command = ChildProcess.make(spec.command, spec.args, {
      // Effect 4's ChildProcess replaces the environment with `env` unless told to extend it:
      // plugins (aws, gke-gcloud-auth-plugin, kubelogin) need the user's PATH, HOME and the rest
      env: { ...Object.fromEntries(spec.env), KUBERNETES_EXEC_INFO: JSON.stringify(execInfo) },
      extendEnv: true,
      stdin: "ignore",
      stderr: "inherit"
    })
    const child = yield* spawner.spawn(command).pipe(
      Effect.mapError((cause) => {
        if (isNotFound(cause)) {
          const hint = spec.installHint !== undefined ? `\n${spec.installHint.trim()}` : ""
          return failWith(`the exec plugin ${spec.commandName} was not found${hint}`)
        }
        return failWith(`cannot run the exec plugin ${spec.commandName}: ${platformCode(cause)}`)
      }),
      // Node's spawn throws some errors (E2BIG) instead of emitting them: the thrown error
      // quotes the command line, so only its code is kept
      Effect.catchDefect((defect) =>
        Effect.fail(failWith(`cannot run the exec plugin ${spec.commandName}: ${errnoCode(defect)}`))
      )
    )
    const chunks: Array<Uint8Array> = []
    yield* child.stdout.pipe(
      Stream.mapError((cause) =>
        failWith(`cannot read the output of the exec plugin ${spec.commandName}: ${platformCode(cause)}`)
      ),
      Stream.runFoldEffect(
        () => 0,
        (size, chunk) => {
          if (size + chunk.length > maxOutput) {
            return Effect.fail(failWith(`the exec plugin ${spec.commandName} printed more than ${maxOutput} bytes`))
          }
          chunks.push(chunk)
          return Effect.succeed(size + chunk.length)
        }
      )
    )
    const code = yield* Effect.mapError(
      child.exitCode,
      () => failWith(`the exec plugin ${spec.commandName} was killed by a signal`)
    )
    if (code !== 0) return yield* Effect.fail(failWith(`the exec plugin ${spec.commandName} exited with code ${code}`))
    return new TextDecoder().decode(concatBytes(chunks))
  }))

interface Issued {
  readonly credentials: Credentials
  /** Epoch milliseconds after which the credentials must not be used, if they expire. */
  readonly expiresAt?: number | undefined
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/

/**
 * A time as Go's `time.Parse(time.RFC3339, ...)` reads it (client-go reads
 * `expirationTimestamp` so): `2006-01-02T15:04:05Z`, with an optional fraction and `Z` or
 * an offset `±hh:mm`, every field in range (a 31st of April, a 24th hour, a 60th second are
 * refused). Epoch milliseconds, or `undefined`. `Date.parse` takes far more (`1` is the
 * year 2001, `Tue, 1 Jan 3333` and a year of six digits are dates), so an exec plugin could
 * make the credentials expire at once, and the plugin run on every request.
 *
 * @internal
 */
export const parseRfc3339 = (text: string): number | undefined => {
  const match = rfc3339.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const fraction = match[7] === undefined ? 0 : Number(`0.${match[7]}`) * 1000
  const offsetHours = match[9] === undefined ? 0 : Number(match[9])
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10])
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const daysInMonth = month === 2
    ? (leap ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined
  const utc = Date.UTC(year, month - 1, day, hour, minute, second) + Math.floor(fraction)
  // Date.UTC reads years 0-99 as 1900-1999: set the year itself
  const date = new Date(utc)
  date.setUTCFullYear(year)
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000 * (match[8] === "-" ? -1 : 1)
  return date.getTime() - offset
}

/** Reads an `ExecCredential`. Messages never quote the output: it holds the credential. @internal */
export const parseExecCredential = (spec: ExecSpec, output: string): Effect.Effect<Issued, KubeConfigError> =>
  Effect.suspend(() => {
    const bad = (detail: string) =>
      Effect.fail(fail(spec.where, spec.field, `the exec plugin ${spec.commandName} ${detail}`))
    let json: unknown
    try {
      json = JSON.parse(output)
    } catch {
      return bad("printed something that is not JSON (an ExecCredential was expected)")
    }
    if (!isMapping(json) || json["kind"] !== "ExecCredential") return bad("did not print an ExecCredential")
    if (json["apiVersion"] !== spec.apiVersion) {
      return bad(`printed an ExecCredential of another apiVersion (${spec.apiVersion} was asked for)`)
    }
    const status = json["status"]
    if (!isMapping(status)) return bad("printed an ExecCredential without a status")
    const token = status["token"]
    const cert = status["clientCertificateData"]
    const key = status["clientKeyData"]
    const hasToken = typeof token === "string" && token !== ""
    const hasCert = typeof cert === "string" && cert !== ""
    const hasKey = typeof key === "string" && key !== ""
    if (hasCert !== hasKey) return bad("printed only one of status.clientCertificateData and status.clientKeyData")
    if (!hasToken && !hasCert) return bad("printed neither status.token nor a client certificate")
    let expiresAt: number | undefined
    const expiration = status["expirationTimestamp"]
    if (expiration !== undefined && expiration !== null && expiration !== "") {
      expiresAt = typeof expiration === "string" ? parseRfc3339(expiration) : undefined
      if (expiresAt === undefined) return bad("printed a status.expirationTimestamp that is not a RFC 3339 time")
    }
    const credentials: Credentials = {
      ...(hasToken ? { token: Redacted.make(token as string) } : {}),
      ...(hasCert ? { clientCertificate: { cert: cert as string, key: Redacted.make(key as string) } } : {})
    }
    return Effect.succeed({ credentials, expiresAt })
  })

/**
 * An exec plugin. Its credentials are cached until their `expirationTimestamp` (for
 * ever when it has none) or until `invalidate`, which the client calls after a 401.
 * Concurrent requests with nothing cached run the plugin once, not once each.
 *
 * @internal
 */
export const exec = (spec: ExecSpec): Effect.Effect<AuthProvider, never, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const lock = yield* Semaphore.make(1)
    let cached: Issued | undefined
    const fresh = (now: number) =>
      cached !== undefined && (cached.expiresAt === undefined || now < cached.expiresAt) ? cached : undefined
    const credentials = Effect.gen(function*() {
      const hit = fresh(yield* Clock.currentTimeMillis)
      if (hit !== undefined) return hit.credentials
      return yield* lock.withPermits(1)(Effect.gen(function*() {
        // Another fiber may have refreshed while this one waited for the lock.
        const again = fresh(yield* Clock.currentTimeMillis)
        if (again !== undefined) return again.credentials
        const issued = yield* Effect.flatMap(run(spawner, spec), (output) => parseExecCredential(spec, output))
        cached = issued
        return issued.credentials
      }))
    })
    return {
      kind: "exec",
      credentials,
      invalidate: Effect.sync(() => {
        cached = undefined
        return true
      })
    }
  })
