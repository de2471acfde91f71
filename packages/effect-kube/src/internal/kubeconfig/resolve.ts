/**
 * Resolving one context of a (merged) kubeconfig into a `KubeConfig.Service`: the
 * server, the TLS material (files read now, relative to the file that named them) and
 * an auth provider.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type { KubeConfigError } from "../../Errors.js"
import type { AuthProvider, Credentials, Impersonation, ProxyOptions, Service, TlsOptions } from "../../KubeConfig.js"
import { parseProxyUrl } from "../transport/proxies.js"
import * as Auth from "./auth.js"
import type { Mapping, Where } from "./fields.js"
import * as F from "./fields.js"
import * as Impersonate from "./impersonate.js"
import * as Oidc from "./oidc.js"
import * as Persist from "./persist.js"
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
  /** Write renewed oidc tokens back to the file that defined the user. Default false. */
  readonly persistOidcTokens?: boolean | undefined
}

/** What resolving a context may need: files (CA, certificates, token files), paths and exec plugins. @internal */
export type Platform = FileSystem.FileSystem | Path.Path | ChildProcessSpawner.ChildProcessSpawner

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
    let impersonate: Impersonation | undefined
    if (userName !== undefined) {
      const userEntry = config.users.get(userName)
      if (userEntry === undefined) {
        return yield* Effect.fail(F.fail(at, `${contextField}.user`, `user "${userName}" not found`))
      }
      auth = yield* resolveUser(userEntry, contextName, cluster, options.persistOidcTokens ?? false)
      impersonate = yield* Impersonate.read(
        { source: userEntry.source, context: contextName },
        userEntry.body,
        `users[${userEntry.name}].user`
      )
    }
    return {
      server: cluster.server,
      namespace,
      tls: cluster.tls,
      auth,
      ...(cluster.proxy !== undefined ? { proxy: cluster.proxy } : {}),
      ...(cluster.disableCompression ? { disableCompression: true } : {}),
      ...(impersonate !== undefined ? { impersonate } : {}),
      context: contextName,
      source: contextEntry.source
    }
  })

interface ResolvedCluster {
  readonly server: string
  readonly tls: TlsOptions
  readonly proxy: ProxyOptions | undefined
  /** `disable-compression: true`: no `Accept-Encoding: gzip` on requests. */
  readonly disableCompression: boolean
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
    const proxyUrl = yield* F.optionalString(where, body, "proxy-url", field)
    const proxy = yield* resolveProxy(where, `${field}.proxy-url`, proxyUrl)
    const insecureSkipTlsVerify = (yield* F.optionalBoolean(where, body, "insecure-skip-tls-verify", field)) ?? false
    const serverName = yield* F.optionalString(where, body, "tls-server-name", field)
    const disableCompression = (yield* F.optionalBoolean(where, body, "disable-compression", field)) ?? false
    const caData = yield* F.optionalString(where, body, "certificate-authority-data", field)
    const caFile = yield* F.optionalString(where, body, "certificate-authority", field)
    let ca: string | undefined
    // A plain http:// server uses no CA: as kubectl, one that is not PEM is ignored there (published test
    // kubeconfigs carry placeholder data); it must still decode, and a file must still be there.
    const usesCa = !server.startsWith("http://")
    const pemFor = (text: string, f: string) =>
      usesCa ? F.checkPem(where, text, f) : Effect.succeed(text.includes("-----BEGIN ") ? text : undefined)
    // As in kubectl, inline data wins over a file when both are given.
    if (caData !== undefined) {
      const f = `${field}.certificate-authority-data`
      ca = yield* pemFor(yield* F.decodeData(where, caData, f), f)
    } else if (caFile !== undefined) {
      const f = `${field}.certificate-authority`
      ca = yield* pemFor(yield* F.readFileText(where, yield* F.resolvePath(entry.dir, caFile), f), f)
    }
    const extensions = yield* F.optionalList(where, body, "extensions", field)
    const execConfig = extensions.find((e) =>
      F.isMapping(e) && e["name"] === "client.authentication.k8s.io/exec"
    ) as Mapping | undefined
    const execInfo: Mapping = {
      server,
      ...(serverName !== undefined ? { "tls-server-name": serverName } : {}),
      ...(insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(ca !== undefined ? { "certificate-authority-data": Base64.encode(ca) } : {}),
      // As client-go gives it (with its credentials: the plugin is the user's own program).
      ...(proxyUrl !== undefined ? { "proxy-url": proxyUrl } : {}),
      ...(disableCompression ? { "disable-compression": true } : {}),
      ...(execConfig?.["extension"] !== undefined ? { config: execConfig["extension"] } : {})
    }
    return { server, tls: { ca, insecureSkipTlsVerify, serverName }, proxy, disableCompression, execInfo }
  })

/** Reads a proxy URL; the refusal names the field, never the URL (it may hold a password). @internal */
export const resolveProxy = (
  where: Where,
  field: string,
  value: string | undefined
): Effect.Effect<ProxyOptions | undefined, KubeConfigError> =>
  value === undefined ? Effect.succeed(undefined) : Result.match(parseProxyUrl(value), {
    onFailure: (problem) => Effect.fail(F.fail(where, field, problem)),
    onSuccess: (proxy) => Effect.succeed(proxy)
  })

const resolveUser = (
  entry: Entry,
  context: string,
  cluster: ResolvedCluster,
  persistOidcTokens: boolean
): Effect.Effect<AuthProvider, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const where: Where = { source: entry.source, context }
    const field = `users[${entry.name}].user`
    const body = entry.body
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
      const fs = yield* FileSystem.FileSystem
      // Only a file can be written back to ("<string>" and "<explicit>" are not files).
      const onRefresh = persistOidcTokens && !entry.source.startsWith("<")
        ? Persist.oidcTokens(fs, entry.source, entry.name)
        : undefined
      provider = yield* resolveAuthProvider(where, `${field}.auth-provider`, authProvider, onRefresh)
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
      const why = apiVersion === "client.authentication.k8s.io/v1alpha1"
        ? "client.authentication.k8s.io/v1alpha1 was removed from Kubernetes (and kubectl) in 1.24"
        : "this apiVersion is not supported"
      return yield* Effect.fail(
        F.fail(
          where,
          `${field}.apiVersion`,
          `${why}: set it to client.authentication.k8s.io/v1beta1 (what most plugins speak) ` +
            "or client.authentication.k8s.io/v1"
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

/** Auth-providers that kubectl no longer has, and what replaced them. */
const removedAuthProviders: { readonly [name: string]: string } = {
  gcp: "kubectl removed it; install gke-gcloud-auth-plugin and use its exec entry " +
    "(gcloud container clusters get-credentials writes it)",
  azure: "kubectl removed it; install kubelogin and use its exec entry (kubelogin convert-kubeconfig writes it)"
}

const resolveAuthProvider = (
  where: Where,
  field: string,
  body: Mapping,
  onRefresh: ((tokens: Oidc.Refreshed) => Effect.Effect<void>) | undefined
): Effect.Effect<AuthProvider, KubeConfigError> =>
  Effect.gen(function*() {
    const name = yield* F.requiredString(where, body, "name", field)
    if (name !== "oidc") {
      const replacement = removedAuthProviders[name] ?? "use an exec plugin instead"
      return yield* Effect.fail(
        F.fail(where, `${field}.name`, `auth-provider ${name} is not supported: ${replacement}`)
      )
    }
    const configField = `${field}.config`
    const config = (yield* F.optionalRecord(where, body, "config", field)) ?? {}
    const idToken = yield* F.optionalString(where, config, "id-token", configField)
    const refreshToken = yield* F.optionalString(where, config, "refresh-token", configField)
    const clientId = yield* F.optionalString(where, config, "client-id", configField)
    const clientSecret = yield* F.optionalString(where, config, "client-secret", configField)
    const issuerUrl = yield* F.optionalString(where, config, "idp-issuer-url", configField)
    if (issuerUrl !== undefined) {
      yield* normaliseServer(where, `${configField}.idp-issuer-url`, issuerUrl)
    }
    const canRefresh = refreshToken !== undefined && clientId !== undefined && issuerUrl !== undefined
    if (idToken === undefined && !canRefresh) {
      return yield* Effect.fail(
        F.fail(
          where,
          `${configField}.id-token`,
          "is required, unless refresh-token, client-id and idp-issuer-url are given to obtain one"
        )
      )
    }
    const client = yield* Oidc.OidcHttpClient
    for (const key of ["idp-certificate-authority", "idp-certificate-authority-data"]) {
      if (canRefresh && config[key] !== undefined && config[key] !== null && client === Oidc.makeDefaultClient()) {
        return yield* Effect.fail(
          F.fail(
            where,
            `${configField}.${key}`,
            "is not applied: the issuer is reached through KubeConfig.OidcHttpClient, which by default trusts " +
              "the platform's roots only; provide an HttpClient that trusts this CA as KubeConfig.OidcHttpClient"
          )
        )
      }
    }
    return yield* Oidc.oidc({
      where,
      field,
      idToken: idToken !== undefined ? Redacted.make(idToken) : undefined,
      refreshToken: refreshToken !== undefined ? Redacted.make(refreshToken) : undefined,
      clientId,
      clientSecret: clientSecret !== undefined ? Redacted.make(clientSecret) : undefined,
      issuerUrl,
      client,
      onRefresh
    })
  })
