/**
 * Where a configuration comes from: explicit values, kubeconfig files or text, the
 * in-cluster service account, and the default lookup that chooses among them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Redacted from "effect/Redacted"
import type { KubeConfigError } from "../../Errors.js"
import type { AuthProvider, Credentials, MakeOptions, Service } from "../../KubeConfig.js"
import * as Auth from "./auth.js"
import type { Where } from "./fields.js"
import * as F from "./fields.js"
import * as Impersonate from "./impersonate.js"
import * as Parse from "./parse.js"
import * as Resolve from "./resolve.js"

/** @internal */
export type Env = { readonly [name: string]: string | undefined }

/** The process environment where the runtime has one (Node, Bun and Deno all give `process.env`). @internal */
export const processEnv = (): Env =>
  (globalThis as { readonly process?: { readonly env?: Env } }).process?.env ?? {}

/** The home directory as kubectl finds it: `$HOME`, else `%USERPROFILE%` on Windows. @internal */
export const homeDirOf = (env: Env): string => env["HOME"] || env["USERPROFILE"] || ""

/** Everything a kubeconfig may need: files, paths and exec plugins. @internal */
export type Platform = FileSystem.FileSystem | Path.Path | ChildProcessSpawner.ChildProcessSpawner

const redact = (value: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(value) ? value : Redacted.make(value)

/** @internal */
export const make = (options: MakeOptions): Effect.Effect<Service, KubeConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const where: Where = { source: "<explicit>" }
    const server = yield* Resolve.normaliseServer(where, "server", options.server)
    const ways = [
      options.token !== undefined || options.tokenFile !== undefined ? "token" : undefined,
      options.username !== undefined || options.password !== undefined ? "username/password" : undefined,
      options.auth !== undefined ? "auth" : undefined
    ].filter((w) => w !== undefined)
    if (ways.length > 1) {
      return yield* Effect.fail(F.fail(where, undefined, `more than one way to authenticate: ${ways.join(", ")}`))
    }
    if (options.token !== undefined && options.tokenFile !== undefined) {
      return yield* Effect.fail(F.fail(where, "tokenFile", "give either token or tokenFile, not both"))
    }
    if ((options.username === undefined) !== (options.password === undefined)) {
      return yield* Effect.fail(F.fail(where, "password", "username and password must be given together"))
    }
    if (options.tls?.ca !== undefined) yield* F.checkPem(where, options.tls.ca, "tls.ca")
    let clientCertificate: Credentials["clientCertificate"]
    if (options.clientCertificate !== undefined) {
      yield* F.checkPem(where, options.clientCertificate.cert, "clientCertificate.cert")
      const key = redact(options.clientCertificate.key)
      yield* F.checkPem(where, Redacted.value(key), "clientCertificate.key")
      clientCertificate = { cert: options.clientCertificate.cert, key }
    }
    const proxy = options.proxy === undefined
      ? undefined
      : yield* Resolve.resolveProxy(where, "proxy", Redacted.value(redact(options.proxy)))
    const impersonate = options.impersonate === undefined ? undefined : yield* Impersonate.read(
      where,
      {
        as: options.impersonate.user,
        "as-uid": options.impersonate.uid,
        "as-groups": options.impersonate.groups,
        "as-user-extra": options.impersonate.extra
      },
      "impersonate"
    )
    let auth: AuthProvider | undefined = options.auth
    if (options.tokenFile !== undefined) {
      auth = yield* Auth.tokenFile(options.tokenFile, where, "tokenFile")
    } else if (options.token !== undefined) {
      auth = Auth.fixed("token", { token: redact(options.token) })
    } else if (options.username !== undefined && options.password !== undefined) {
      auth = Auth.fixed("basic", { basic: { username: options.username, password: redact(options.password) } })
    }
    if (clientCertificate !== undefined) {
      auth = auth === undefined
        ? Auth.fixed("clientCertificate", { clientCertificate })
        : Auth.withClientCertificate(auth, clientCertificate)
    }
    return {
      server,
      namespace: options.namespace ?? "default",
      tls: {
        ca: options.tls?.ca,
        insecureSkipTlsVerify: options.tls?.insecureSkipTlsVerify ?? false,
        serverName: options.tls?.serverName
      },
      auth: auth ?? Auth.none,
      ...(proxy !== undefined ? { proxy } : {}),
      ...(options.disableCompression === true ? { disableCompression: true } : {}),
      ...(impersonate !== undefined ? { impersonate } : {}),
      source: "<explicit>"
    }
  })

/** @internal */
export interface FileOptions {
  /** One file, or a path list like `$KUBECONFIG`; default `$KUBECONFIG`, else `~/.kube/config`. */
  readonly path?: string | undefined
  readonly context?: string | undefined
  /** Write renewed oidc tokens back to the file that defined the user. Default false. */
  readonly persistOidcTokens?: boolean | undefined
  /** For tests: the environment to read `KUBECONFIG` from. */
  readonly env?: Env | undefined
  /** For tests: the home directory holding `.kube/config`. */
  readonly homeDir?: string | undefined
}

/** The kubeconfig path list kubectl would use: `$KUBECONFIG`, else `~/.kube/config`. @internal */
export const defaultPaths = (paths: Path.Path, env: Env, homeDir: string): ReadonlyArray<string> => {
  const list = env["KUBECONFIG"]
  if (list !== undefined && list.trim() !== "") {
    return list.split(F.pathListDelimiter(paths)).filter((p) => p !== "")
  }
  return [paths.join(homeDir, ".kube", "config")]
}

/** @internal */
export const fromFile = (options: FileOptions = {}): Effect.Effect<Service, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const paths = yield* Path.Path
    const delimiter = F.pathListDelimiter(paths)
    // An explicit single path must exist; a path list skips missing files as kubectl does.
    const config = options.path !== undefined && !options.path.includes(delimiter)
      ? yield* Effect.map(
        Parse.readFile(options.path, { ignoreMissing: false }),
        (config) => config ?? Parse.empty
      )
      : yield* Parse.readFiles(
        options.path !== undefined
          ? options.path.split(delimiter)
          : defaultPaths(paths, options.env ?? processEnv(), options.homeDir ?? homeDirOf(processEnv()))
      )
    return yield* Resolve.resolve(config, { context: options.context, persistOidcTokens: options.persistOidcTokens })
  })

/** @internal */
export interface StringOptions {
  readonly context?: string | undefined
  /** The directory that relative paths are resolved against (default: the working directory). */
  readonly basePath?: string | undefined
}

/** @internal */
export const fromString = (
  text: string,
  options: StringOptions = {}
): Effect.Effect<Service, KubeConfigError, Platform> =>
  Effect.flatMap(Path.Path, (paths) =>
    Effect.flatMap(
      Parse.parse(text, "<string>", paths.resolve(options.basePath ?? ".")),
      (config) => Resolve.resolve(config, { context: options.context })
    ))

/** The service-account directory every pod gets. @internal */
export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

/** @internal */
export interface InClusterOptions {
  /** The service-account directory holding `token`, `ca.crt` and `namespace`. */
  readonly dir?: string | undefined
  /** The environment holding `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. */
  readonly env?: Env | undefined
}

const exists = (path: string): Effect.Effect<boolean, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.orElseSucceed(fs.exists(path), () => false))

/** True when this looks like a pod: the service env vars are set and the token is there. @internal */
export const isInCluster = (
  options: InClusterOptions = {}
): Effect.Effect<boolean, never, FileSystem.FileSystem | Path.Path> => {
  const env = options.env ?? processEnv()
  const host = env["KUBERNETES_SERVICE_HOST"]
  const port = env["KUBERNETES_SERVICE_PORT"]
  if (host === undefined || host === "" || port === undefined || port === "") return Effect.succeed(false)
  return Effect.flatMap(Path.Path, (paths) => exists(paths.join(options.dir ?? serviceAccountDir, "token")))
}

/**
 * The pod's own service account, as client-go's `InClusterConfig`: the API server from
 * the env, the token from its (rotating) file, the CA and namespace from their files.
 *
 * @internal
 */
export const inCluster = (
  options: InClusterOptions = {}
): Effect.Effect<Service, KubeConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const paths = yield* Path.Path
    const source = "<in-cluster>"
    const where: Where = { source }
    const env = options.env ?? processEnv()
    const dir = options.dir ?? serviceAccountDir
    const host = env["KUBERNETES_SERVICE_HOST"]
    const port = env["KUBERNETES_SERVICE_PORT"]
    if (host === undefined || host === "") {
      return yield* Effect.fail(F.fail(where, "KUBERNETES_SERVICE_HOST", "is not set (not running in a pod?)"))
    }
    if (port === undefined || port === "") {
      return yield* Effect.fail(F.fail(where, "KUBERNETES_SERVICE_PORT", "is not set (not running in a pod?)"))
    }
    const server = yield* Resolve.normaliseServer(
      where,
      "KUBERNETES_SERVICE_HOST",
      `https://${host.includes(":") ? `[${host}]` : host}:${port}`
    )
    const tokenPath = paths.join(dir, "token")
    const auth = yield* Auth.tokenFile(tokenPath, where, tokenPath)
    // Fail now, not on the first request, when the token is unreadable.
    yield* auth.credentials
    const caPath = paths.join(dir, "ca.crt")
    const ca = yield* F.checkPem(where, yield* F.readFileText(where, caPath, caPath), caPath)
    const namespacePath = paths.join(dir, "namespace")
    const namespace = (yield* exists(namespacePath))
      ? (yield* F.readFileText(where, namespacePath, namespacePath)).trim()
      : ""
    return {
      server,
      namespace: namespace === "" ? "default" : namespace,
      tls: { ca, insecureSkipTlsVerify: false, serverName: undefined },
      auth,
      source
    }
  })

/** @internal */
export interface EnvironmentOptions {
  readonly context?: string | undefined
  readonly env?: Env | undefined
  readonly homeDir?: string | undefined
  readonly inClusterDir?: string | undefined
}

/**
 * What `KubeConfig.layer` loads: in-cluster when it looks like a pod (and no context was
 * asked for), otherwise the kubeconfig that kubectl would use.
 *
 * @internal
 */
export const fromEnvironment = (
  options: EnvironmentOptions = {}
): Effect.Effect<Service, KubeConfigError, Platform> =>
  Effect.gen(function*() {
    const inClusterOptions = { dir: options.inClusterDir, env: options.env }
    if (options.context === undefined && (yield* isInCluster(inClusterOptions))) {
      return yield* inCluster(inClusterOptions)
    }
    return yield* fromFile({ context: options.context, env: options.env, homeDir: options.homeDir })
  })
