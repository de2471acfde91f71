/**
 * Readers for the untyped values of a parsed kubeconfig. Every failure names the file,
 * the context and the field; none ever quotes a value, because values may be tokens,
 * passwords or keys.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { KubeConfigError } from "../../Errors.js"
import { concatBytes } from "../stream/lines.js"

/** @internal */
export interface Where {
  readonly source: string
  readonly context?: string | undefined
}

/** @internal */
export type Mapping = { readonly [key: string]: unknown }

/** @internal */
export const fail = (where: Where, field: string | undefined, detail: string): KubeConfigError =>
  new KubeConfigError({ source: where.source, context: where.context, field, detail })

/** @internal */
export const isMapping = (u: unknown): u is Mapping => typeof u === "object" && u !== null && !Array.isArray(u)

const typeName = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "a list" : `a ${typeof u}`)

/** @internal */
export const optionalString = (
  where: Where,
  body: Mapping,
  key: string,
  field: string
): Effect.Effect<string | undefined, KubeConfigError> => {
  const value = body[key]
  if (value === undefined || value === null || value === "") return Effect.succeed(undefined)
  if (typeof value === "string") return Effect.succeed(value)
  // Say what was found, never the value itself: it may be a numeric password.
  return Effect.fail(fail(where, `${field}.${key}`, `must be a string, found ${typeName(value)} (quote it)`))
}

/** @internal */
export const requiredString = (
  where: Where,
  body: Mapping,
  key: string,
  field: string
): Effect.Effect<string, KubeConfigError> =>
  Effect.flatMap(
    optionalString(where, body, key, field),
    (value) => value === undefined ? Effect.fail(fail(where, `${field}.${key}`, "is required")) : Effect.succeed(value)
  )

/** @internal */
export const optionalBoolean = (
  where: Where,
  body: Mapping,
  key: string,
  field: string
): Effect.Effect<boolean | undefined, KubeConfigError> => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  if (typeof value === "boolean") return Effect.succeed(value)
  if (value === "true" || value === "false") return Effect.succeed(value === "true")
  return Effect.fail(fail(where, `${field}.${key}`, `must be true or false, found ${typeName(value)}`))
}

/** @internal */
export const optionalRecord = (
  where: Where,
  body: Mapping,
  key: string,
  field: string
): Effect.Effect<Mapping | undefined, KubeConfigError> => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  if (isMapping(value)) return Effect.succeed(value)
  return Effect.fail(fail(where, `${field}.${key}`, `must be a mapping, found ${typeName(value)}`))
}

/** @internal */
export const optionalList = (
  where: Where,
  body: Mapping,
  key: string,
  field: string
): Effect.Effect<ReadonlyArray<unknown>, KubeConfigError> => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed([])
  if (Array.isArray(value)) return Effect.succeed(value)
  return Effect.fail(fail(where, `${field}.${key}`, `must be a list, found ${typeName(value)}`))
}

const base64Pattern = /^[A-Za-z0-9+/=\s]*$/

/** Decodes a `*-data` field (standard base64 of a PEM text). @internal */
export const decodeData = (
  where: Where,
  value: string,
  field: string
): Effect.Effect<string, KubeConfigError> => {
  if (!base64Pattern.test(value)) return Effect.fail(fail(where, field, "is not valid base64"))
  const decoded = Base64.decodeString(value.replace(/\s+/g, ""))
  if (Result.isFailure(decoded)) return Effect.fail(fail(where, field, "is not valid base64"))
  const text = decoded.success
  return text.trim() === "" ? Effect.fail(fail(where, field, "decodes to nothing")) : Effect.succeed(text)
}

/** Checks that a text looks like PEM, so a wrong file fails here rather than deep in TLS. @internal */
export const checkPem = (
  where: Where,
  text: string,
  field: string
): Effect.Effect<string, KubeConfigError> =>
  text.includes("-----BEGIN ")
    ? Effect.succeed(text)
    : Effect.fail(fail(where, field, "is not PEM (no -----BEGIN line)"))

/** Resolves a path the way kubectl does: relative to the directory of the file that named it. @internal */
export const resolvePath = (dir: string, path: string): Effect.Effect<string, never, Path.Path> =>
  Effect.map(Path.Path, (paths) => paths.resolve(dir, path))

/** The separator of a path list such as `$KUBECONFIG`: `;` on Windows, `:` elsewhere. @internal */
export const pathListDelimiter = (paths: Path.Path): string => (paths.sep === "\\" ? ";" : ":")

/**
 * The most bytes read of a kubeconfig or of a file it names (a CA bundle, a client
 * certificate or key, a token file): a real one is a few KB (the whole Mozilla CA bundle is
 * 220 KB). A larger file, or one without end (`/dev/zero`, a FIFO), fails without being
 * read further.
 *
 * @internal
 */
export const maxFileBytes = 16 * 1024 * 1024

/** What `readBounded` gives for a file holding more than `maxFileBytes`. @internal */
export const tooLarge = `holds more than ${maxFileBytes / 1024 / 1024} MiB`

/**
 * The bytes of a file, read up to one past `maxFileBytes` so that a file without end stops
 * there: `undefined` when there were more.
 *
 * @internal
 */
export const readBounded = (
  fs: FileSystem.FileSystem,
  path: string
): Effect.Effect<Uint8Array | undefined, PlatformError.PlatformError> =>
  Effect.map(Stream.runCollect(fs.stream(path, { bytesToRead: maxFileBytes + 1 })), (chunks) => {
    let size = 0
    for (const chunk of chunks) size += chunk.length
    return size > maxFileBytes ? undefined : concatBytes(chunks)
  })

const utf8 = new TextDecoder("utf-8")

/**
 * The text of a file named by a kubeconfig field (or a token file), within `maxFileBytes`.
 * The cause is the fs error, which holds the path only.
 *
 * @internal
 */
export const readFileText = (
  where: Where,
  path: string,
  field: string
): Effect.Effect<string, KubeConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.flatMap(
      Effect.mapError(readBounded(fs, path), (cause) =>
        new KubeConfigError({
          source: where.source,
          context: where.context,
          field,
          detail: `cannot read ${path}: ${platformCode(cause)}`,
          cause
        })),
      (bytes) =>
        bytes === undefined
          ? Effect.fail(fail(where, field, `cannot read ${path}: it ${tooLarge}`))
          : Effect.succeed(utf8.decode(bytes))
    ))

/** @internal */
export const errnoCode = (cause: unknown): string =>
  isMapping(cause) && typeof cause["code"] === "string" ? cause["code"] : "unknown error"

/**
 * What went wrong in a platform call, in a word: the operating system's code where the
 * runtime gives one (`ENOENT`), else the platform's reason (`NotFound`). Never the
 * description, which may quote a command line.
 *
 * @internal
 */
export const platformCode = (error: PlatformError.PlatformError): string => {
  const reason = error.reason
  if (reason._tag !== "BadArgument") {
    const code = errnoCode(reason.cause)
    return code !== "unknown error" ? code : reason._tag
  }
  return "bad argument"
}

/** True when a platform call failed because the file or command does not exist. @internal */
export const isNotFound = (error: PlatformError.PlatformError): boolean => error.reason._tag === "NotFound"
