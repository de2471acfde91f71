/**
 * Resolving one context of a (merged) kubeconfig into a `KubeConfig.Service`: the
 * server, the TLS material (files read now, relative to the file that named them) and
 * an auth provider.
 *
 * @internal
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"
import type { KubeConfigError } from "../../Errors.js"
import type { AuthProvider, Credentials, Service, TlsOptions } from "../../KubeConfig.js"
import * as Auth from "./auth.js"
import type { Mapping, Where } from "./fields.js"
import * as F from "./fields.js"
import type { Config, Entry } from "./parse.js"

/** Normalises a server URL: must be http(s), loses its trailing slashes. @internal */
export const normaliseServer = (
  where: Where,
  field: string,
  server: string
): Effect.Effect<string, KubeConfigError> => {
  let url: URL
  try {
    url = new URL(server)
  } catch {
    return Effect.fail(F.fail(where, field, "is not a URL (expected https://host:port)"))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Effect.fail(F.fail(where, field, `must be an https:// or http:// URL, not ${url.protocol}`))
  }
  if (url.username !== "" || url.password !== "") {
    return Effect.fail(F.fail(where, field, "must not contain credentials (use the user entry)"))
  }
  if (url.search !== "" || url.hash !== "") {
    return Effect.fail(F.fail(where, field, "must not contain a query or fragment"))
  }
  return Effect.succeed(`${url.origin}${url.pathname}`.replace(/\/+$/, ""))
}

/** Options for `resolve`. @internal */
export interface ResolveOptions {
  /** The context to use instead of `current-context`. */
  readonly context?: string | undefined
}

/** What resolving a context may need: files (CA, certificates, token files), paths and exec plugins. @internal */
export type Platform = FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor

/** @internal */
export const resolve = (
  config: Config,
  options: ResolveOptions = {}
): Effect.Effect<Service, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const firstSource = config.sources[0] ?? "<none>"
    const contextName = options.context ?? config.currentContext?.name
    if (contextName === undefined || contextName === "") {
      return yield* Effect.fail(
        F.fail({ source: firstSource }, "current-context", "no context was given and current-context is not set")
      )
    }
    const contextEntry = config.contexts.get(contextName)
    if (contextEntry === undefined) {
      const source = options.context === undefined && config.currentContext !== undefined
        ? config.currentContext.source
        : firstSource
      const known = [...config.contexts.keys()]
      const choices = known.length === 0 ? "there are no contexts" : `known: ${known.join(", ")}`
      return yield* Effect.fail(
        F.fail(
          { source, context: contextName },
          options.context === undefined ? "current-context" : "contexts",
          `context "${contextName}" not found (${choices})`
        )
      )
    }
    const at: Where = { source: contextEntry.source, context: contextName }
    const contextField = `contexts[${contextName}].context`
    const clusterName = yield* F.requiredString(at, contextEntry.body, "cluster", contextField)
    const userName = yield* F.optionalString(at, contextEntry.body, "user", contextField)
    const namespace = (yield* F.optionalString(at, contextEntry.body, "namespace", contextField)) ?? "default"

    const clusterEntry = config.clusters.get(clusterName)
    if (clusterEntry === undefined) {
      return yield* Effect.fail(F.fail(at, `${contextField}.cluster`, `cluster "${clusterName}" not found`))
    }
    const cluster = yield* resolveCluster(clusterEntry, contextName)

    let auth: AuthProvider = Auth.none
    if (userName !== undefined) {
      const userEntry = config.users.get(userName)
      if (userEntry === undefined) {
        return yield* Effect.fail(F.fail(at, `${contextField}.user`, `user "${userName}" not found`))
      }
      auth = yield* resolveUser(userEntry, contextName, cluster)
    }
    return {
      server: cluster.server,
      namespace,
      tls: cluster.tls,
      auth,
      context: contextName,
      source: contextEntry.source
    }
  })

interface ResolvedCluster {
  readonly server: string
  readonly tls: TlsOptions
  /** `spec.cluster` for exec plugins that ask for cluster info. */
  readonly execInfo: Mapping
}

const resolveCluster = (
  entry: Entry,
  context: string
): Effect.Effect<ResolvedCluster, KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const where: Where = { source: entry.source, context }
    const field = `clusters[${entry.name}].cluster`
    const body = entry.body
    const server = yield* normaliseServer(
      where,
      `${field}.server`,
      yield* F.requiredString(where, body, "server", field)
    )
    if (body["proxy-url"] !== undefined && body["proxy-url"] !== null && body["proxy-url"] !== "") {
      return yield* Effect.fail(F.fail(where, `${field}.proxy-url`, "proxies are not supported"))
    }
    const insecureSkipTlsVerify = (yield* F.optionalBoolean(where, body, "insecure-skip-tls-verify", field)) ?? false
    const serverName = yield* F.optionalString(where, body, "tls-server-name", field)
    const caData = yield* F.optionalString(where, body, "certificate-authority-data", field)
    const caFile = yield* F.optionalString(where, body, "certificate-authority", field)
    let ca: string | undefined
    // As in kubectl, inline data wins over a file when both are given.
    if (caData !== undefined) {
      const f = `${field}.certificate-authority-data`
      ca = yield* F.checkPem(where, yield* F.decodeData(where, caData, f), f)
    } else if (caFile !== undefined) {
      const f = `${field}.certificate-authority`
      ca = yield* F.checkPem(where, yield* F.readFileText(where, yield* F.resolvePath(entry.dir, caFile), f), f)
    }
    const extensions = yield* F.optionalList(where, body, "extensions", field)
    const execConfig = extensions.find((e) =>
      F.isMapping(e) && e["name"] === "client.authentication.k8s.io/exec"
    ) as Mapping | undefined
    const execInfo: Mapping = {
      server,
      ...(serverName !== undefined ? { "tls-server-name": serverName } : {}),
      ...(insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(ca !== undefined ? { "certificate-authority-data": Encoding.encodeBase64(ca) } : {}),
      ...(execConfig?.["extension"] !== undefined ? { config: execConfig["extension"] } : {})
    }
    return { server, tls: { ca, insecureSkipTlsVerify, serverName }, execInfo }
  })

/** Fields of a user entry that kubectl knows and this client deliberately does not support. */
const unsupportedUserFields: ReadonlyArray<readonly [string, string]> = [
  ["as", "impersonation is not supported"],
  ["as-uid", "impersonation is not supported"],
  ["as-groups", "impersonation is not supported"],
  ["as-user-extra", "impersonation is not supported"]
]

const resolveUser = (
  entry: Entry,
  context: string,
  cluster: ResolvedCluster
): Effect.Effect<AuthProvider, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const where: Where = { source: entry.source, context }
    const field = `users[${entry.name}].user`
    const body = entry.body
    for (const [key, why] of unsupportedUserFields) {
      if (body[key] !== undefined && body[key] !== null) {
        return yield* Effect.fail(F.fail(where, `${field}.${key}`, why))
      }
    }

    const clientCertificate = yield* resolveClientCertificate(entry, where, field)
    const token = yield* F.optionalString(where, body, "token", field)
    const tokenFile = yield* F.optionalString(where, body, "tokenFile", field)
    const username = yield* F.optionalString(where, body, "username", field)
    const password = yield* F.optionalString(where, body, "password", field)
    const exec = yield* F.optionalRecord(where, body, "exec", field)
    const authProvider = yield* F.optionalRecord(where, body, "auth-provider", field)

    const ways = [
      token !== undefined || tokenFile !== undefined ? "token" : undefined,
      username !== undefined || password !== undefined ? "username/password" : undefined,
      exec !== undefined ? "exec" : undefined,
      authProvider !== undefined ? "auth-provider" : undefined
    ].filter((w) => w !== undefined)
    if (ways.length > 1) {
      return yield* Effect.fail(F.fail(where, field, `sets more than one way to authenticate: ${ways.join(", ")}`))
    }

    let provider: AuthProvider | undefined
    if (tokenFile !== undefined) {
      // As in client-go, a token file wins over an inline token: it is the one kept fresh.
      provider = yield* Auth.tokenFile(yield* F.resolvePath(entry.dir, tokenFile), where, `${field}.tokenFile`)
    } else if (token !== undefined) {
      provider = Auth.fixed("token", { token: Redacted.make(token) })
    } else if (username !== undefined || password !== undefined) {
      if (username === undefined || password === undefined) {
        return yield* Effect.fail(F.fail(where, field, "username and password must be given together"))
      }
      provider = Auth.fixed("basic", { basic: { username, password: Redacted.make(password) } })
    } else if (exec !== undefined) {
      provider = yield* resolveExec(entry, where, `${field}.exec`, exec, cluster)
    } else if (authProvider !== undefined) {
      provider = yield* resolveAuthProvider(where, `${field}.auth-provider`, authProvider)
    }

    if (provider === undefined) {
      return clientCertificate !== undefined ? Auth.fixed("clientCertificate", { clientCertificate }) : Auth.none
    }
    return clientCertificate !== undefined ? Auth.withClientCertificate(provider, clientCertificate) : provider
  })

const resolveClientCertificate = (
  entry: Entry,
  where: Where,
  field: string
): Effect.Effect<Credentials["clientCertificate"], KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const body = entry.body
    const pem = (key: string) =>
      Effect.gen(function*() {
        const data = yield* F.optionalString(where, body, `${key}-data`, field)
        if (data !== undefined) {
          const f = `${field}.${key}-data`
          return yield* F.checkPem(where, yield* F.decodeData(where, data, f), f)
        }
        const file = yield* F.optionalString(where, body, key, field)
        if (file === undefined) return undefined
        const f = `${field}.${key}`
        return yield* F.checkPem(where, yield* F.readFileText(where, yield* F.resolvePath(entry.dir, file), f), f)
      })
    const cert = yield* pem("client-certificate")
    const key = yield* pem("client-key")
    if (cert === undefined && key === undefined) return undefined
    if (cert === undefined) {
      return yield* Effect.fail(F.fail(where, `${field}.client-certificate`, "is required with client-key"))
    }
    if (key === undefined) {
      return yield* Effect.fail(F.fail(where, `${field}.client-key`, "is required with client-certificate"))
    }
    return { cert, key: Redacted.make(key) }
  })

const resolveExec = (
  entry: Entry,
  where: Where,
  field: string,
  body: Mapping,
  cluster: ResolvedCluster
): Effect.Effect<AuthProvider, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const apiVersion = yield* F.requiredString(where, body, "apiVersion", field)
    if (!(Auth.execApiVersions as ReadonlyArray<string>).includes(apiVersion)) {
      return yield* Effect.fail(
        F.fail(
          where,
          `${field}.apiVersion`,
          `${apiVersion} is not supported (use ${Auth.execApiVersions.join(" or ")})`
        )
      )
    }
    const command = yield* F.requiredString(where, body, "command", field)
    const args = yield* F.optionalList(where, body, "args", field)
    for (let i = 0; i < args.length; i++) {
      if (typeof args[i] !== "string") {
        return yield* Effect.fail(F.fail(where, `${field}.args[${i}]`, "must be a string"))
      }
    }
    const envList = yield* F.optionalList(where, body, "env", field)
    const env: Array<readonly [string, string]> = []
    for (let i = 0; i < envList.length; i++) {
      const item = envList[i]
      if (!F.isMapping(item) || typeof item["name"] !== "string" || typeof item["value"] !== "string") {
        return yield* Effect.fail(F.fail(where, `${field}.env[${i}]`, "must have a string name and value"))
      }
      env.push([item["name"], item["value"]])
    }
    const interactiveMode = yield* F.optionalString(where, body, "interactiveMode", field)
    if (interactiveMode !== undefined && !["Never", "IfAvailable", "Always"].includes(interactiveMode)) {
      return yield* Effect.fail(F.fail(where, `${field}.interactiveMode`, "must be Never, IfAvailable or Always"))
    }
    if (interactiveMode === "Always") {
      return yield* Effect.fail(
        F.fail(where, `${field}.interactiveMode`, "Always is not supported: plugins run without a terminal")
      )
    }
    const provideClusterInfo = (yield* F.optionalBoolean(where, body, "provideClusterInfo", field)) ?? false
    const installHint = yield* F.optionalString(where, body, "installHint", field)
    // client-go resolves a command with a path separator against the kubeconfig's
    // directory, and looks a bare name up in PATH.
    const paths = yield* Path.Path
    const resolved = command.includes("/") || command.includes(paths.sep)
      ? paths.resolve(entry.dir, command)
      : command
    return yield* Auth.exec({
      where,
      field,
      apiVersion: apiVersion as Auth.ExecApiVersion,
      commandName: command,
      command: resolved,
      args: args as ReadonlyArray<string>,
      env,
      cluster: provideClusterInfo ? cluster.execInfo : undefined,
      installHint
    })
  })

const resolveAuthProvider = (
  where: Where,
  field: string,
  body: Mapping
): Effect.Effect<AuthProvider, KubeConfigError> =>
  Effect.gen(function*() {
    const name = yield* F.requiredString(where, body, "name", field)
    if (name !== "oidc") {
      return yield* Effect.fail(
        F.fail(where, `${field}.name`, `auth-provider ${name} is not supported (use an exec plugin instead)`)
      )
    }
    const config = (yield* F.optionalRecord(where, body, "config", field)) ?? {}
    const idToken = yield* F.optionalString(where, config, "id-token", `${field}.config`)
    if (idToken === undefined) {
      return yield* Effect.fail(
        F.fail(where, `${field}.config.id-token`, "is required: only an oidc id-token is supported, not a refresh flow")
      )
    }
    return Auth.fixed("oidc", { token: Redacted.make(idToken) })
  })
