/**
 * Parsing kubeconfig files and merging several of them the way kubectl does.
 *
 * Only the outline is checked here (lists of named entries); an entry's body is checked
 * when a context that uses it is resolved, so a broken entry nobody uses does not stop
 * the others from working, as with kubectl.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { KubeConfigError } from "../../Errors.js"
import type { Mapping, Where } from "./fields.js"
import { fail, isMapping, isNotFound, pathListDelimiter, platformCode, readBounded, tooLarge } from "./fields.js"
import * as Yaml from "../manifests/yaml.js"

/** One named cluster, user or context, with the file it came from. @internal */
export interface Entry {
  readonly name: string
  readonly body: Mapping
  /** The file (or `"<string>"`) that defined it: errors name it. */
  readonly source: string
  /** The directory its relative paths are resolved against. */
  readonly dir: string
}

/** A kubeconfig, or several merged into one. @internal */
export interface Config {
  /** The files that were read, in order (for messages). */
  readonly sources: ReadonlyArray<string>
  readonly clusters: ReadonlyMap<string, Entry>
  readonly users: ReadonlyMap<string, Entry>
  readonly contexts: ReadonlyMap<string, Entry>
  readonly currentContext?: { readonly name: string; readonly source: string } | undefined
}

const sections = [
  { key: "clusters", body: "cluster" },
  { key: "users", body: "user" },
  { key: "contexts", body: "context" }
] as const

/**
 * Parses one kubeconfig, as text or as the bytes of a file (UTF-8, or UTF-16 with a byte
 * order mark as Windows PowerShell writes it), with kubectl's YAML rules (see yaml.ts):
 * the first document only, a duplicate key keeping its last value. `source` names it in
 * errors; `dir` anchors its relative paths.
 *
 * @internal
 */
export const parse = (
  input: string | Uint8Array,
  source: string,
  dir: string
): Effect.Effect<Config, KubeConfigError> =>
  Effect.suspend(() => {
    const where: Where = { source }
    const text = Yaml.decodeText(input)
    if (Yaml.looksLikeMisreadUtf16(text)) {
      return Effect.fail(fail(where, undefined, "looks like UTF-16 read as UTF-8 (pass the bytes of the file)"))
    }
    const document = Yaml.parseFirst(text)
    if (Result.isFailure(document)) {
      // Positions only: the text around the error may be a token.
      const at = Yaml.formatPosition(document.failure)
      return Effect.fail(
        fail(where, undefined, `invalid YAML${at === "" ? "" : ` at ${at}`}: ${document.failure.detail}`)
      )
    }
    let root: unknown = document.success
    if (root === null || root === undefined) root = {}
    if (!isMapping(root)) return Effect.fail(fail(where, undefined, "is not a mapping (not a kubeconfig)"))

    const maps: { [K in (typeof sections)[number]["key"]]: Map<string, Entry> } = {
      clusters: new Map(),
      users: new Map(),
      contexts: new Map()
    }
    for (const section of sections) {
      const list = root[section.key]
      if (list === undefined || list === null) continue
      if (!Array.isArray(list)) return Effect.fail(fail(where, section.key, "must be a list"))
      for (let i = 0; i < list.length; i++) {
        const item: unknown = list[i]
        if (!isMapping(item) || typeof item["name"] !== "string" || item["name"] === "") {
          return Effect.fail(fail(where, `${section.key}[${i}].name`, "must be a non-empty string"))
        }
        const name = item["name"]
        const body = item[section.body] ?? {}
        if (!isMapping(body)) {
          return Effect.fail(fail(where, `${section.key}[${name}].${section.body}`, "must be a mapping"))
        }
        if (maps[section.key].has(name)) {
          // kubectl rejects a name twice in one file (across files the first one wins).
          return Effect.fail(fail(where, `${section.key}[${name}]`, "the same name appears twice in this file"))
        }
        maps[section.key].set(name, { name, body, source, dir })
      }
    }
    const current = root["current-context"]
    if (current !== undefined && current !== null && typeof current !== "string") {
      return Effect.fail(fail(where, "current-context", "must be a string"))
    }
    return Effect.succeed({
      sources: [source],
      clusters: maps.clusters,
      users: maps.users,
      contexts: maps.contexts,
      currentContext: typeof current === "string" && current !== "" ? { name: current, source } : undefined
    })
  })

/** An empty configuration, the unit of `merge`. @internal */
export const empty: Config = { sources: [], clusters: new Map(), users: new Map(), contexts: new Map() }

const mergeMaps = (first: ReadonlyMap<string, Entry>, later: ReadonlyMap<string, Entry>) => {
  const out = new Map(first)
  for (const [name, entry] of later) if (!out.has(name)) out.set(name, entry)
  return out
}

/**
 * Merges in kubectl's order: the first file to define a name wins and later ones are
 * ignored; the current context comes from the first file that sets one.
 *
 * @internal
 */
export const merge = (configs: ReadonlyArray<Config>): Config =>
  configs.reduce((acc, next) => ({
    sources: [...acc.sources, ...next.sources],
    clusters: mergeMaps(acc.clusters, next.clusters),
    users: mergeMaps(acc.users, next.users),
    contexts: mergeMaps(acc.contexts, next.contexts),
    currentContext: acc.currentContext ?? next.currentContext
  }), empty)

/** Reads and parses one file; `undefined` when it does not exist and `ignoreMissing` is set. @internal */
export const readFile = (
  path: string,
  options: { readonly ignoreMissing: boolean }
): Effect.Effect<Config | undefined, KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    // Bytes, not text: a kubeconfig may be UTF-16 (PowerShell's `>`), decoded by `parse`.
    const text = yield* readBounded(fs, path).pipe(
      Effect.map((bytes): Uint8Array | null | undefined => bytes ?? null),
      Effect.catch((cause) =>
        options.ignoreMissing && isNotFound(cause)
          ? Effect.succeed(undefined)
          : Effect.fail(
            new KubeConfigError({ source: path, detail: `cannot read the file: ${platformCode(cause)}`, cause })
          )
      )
    )
    if (text === null) return yield* Effect.fail(new KubeConfigError({ source: path, detail: `the file ${tooLarge}` }))
    return text === undefined ? undefined : yield* parse(text, path, paths.dirname(paths.resolve(path)))
  })

/**
 * Reads a path list as kubectl does for `$KUBECONFIG`: missing files are skipped, a
 * path named twice is read once, and the rest are merged in order.
 *
 * @internal
 */
export const readFiles = (
  list: ReadonlyArray<string>
): Effect.Effect<Config, KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const paths = yield* Path.Path
    const seen = new Set<string>()
    const configs: Array<Config> = []
    for (const path of list) {
      const absolute = paths.resolve(path)
      if (path === "" || seen.has(absolute)) continue
      seen.add(absolute)
      const config = yield* readFile(path, { ignoreMissing: true })
      if (config !== undefined) configs.push(config)
    }
    if (configs.length === 0) {
      return yield* Effect.fail(
        new KubeConfigError({
          source: list.join(pathListDelimiter(paths)),
          detail: "none of these kubeconfig files exists"
        })
      )
    }
    return merge(configs)
  })
