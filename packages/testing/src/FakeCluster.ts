/**
 * `FakeCluster`: an in-memory Kubernetes API server for tests, examples and
 * benchmarks. It answers real Kubernetes HTTP requests (CRUD, selectors, pagination,
 * patches, server-side apply with field ownership, watches, pod logs, discovery,
 * OpenShift templates) with Status bodies shaped like the API server's, so the client
 * under test runs its real request path.
 *
 * - `layer` provides `KubeConfig` and an `HttpClient` that answer in memory, plus the
 *   `FakeCluster` controls.
 * - `serve` runs the same fake on a loopback HTTP(S) server and writes a kubeconfig
 *   for it, so kubectl, `@kubernetes/client-node` or `NodeKube.layerFromFile` talk to
 *   it unmodified.
 * - `makeServer` / `listen` do the same without Effect, for benchmark scripts.
 *
 * Namespaces: `default`, `kube-system`, `kube-public` and `kube-node-lease` exist from
 * the start; writing an object into a namespace that does not exist creates that
 * namespace (a real cluster would answer 404), which keeps tests short.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   const cluster = yield* FakeCluster.FakeCluster
 *   cluster.seed([{ apiVersion: "v1", kind: "Pod", metadata: { name: "web", labels: { app: "web" } } }])
 *   const pods = yield* Kube.api(Pods).list({ labelSelector: "app=web" })
 *   cluster.setPodPhase("default", "web", "Running")
 *   const web = yield* Kube.api(Pods).get("web")
 *   return { listed: pods.items.length, phase: Option.getOrThrow(web).status?.phase }
 * }).pipe(Effect.provide(FakeCluster.layer()))
 *
 * Effect.runPromise(program).then((result) => assert.deepStrictEqual(result, { listed: 1, phase: "Running" }))
 * ```
 * @since 0.1.0
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { KubeConfig } from "effect-kube"
import { WebSocketDialer } from "effect-kube/internal/testing"
import { effectClock, type FakeClock } from "./internal/store/clock.js"
import * as FakeExec from "./internal/kubelet/exec.js"
import * as Node from "./internal/serve/loopbackServer.js"
import { streamResponse, textResponse } from "./internal/serve/clientResponse.js"
import * as Http from "./internal/serve/http.js"
import * as Internal from "./internal/serve/server.js"
import type { Control, ListenOptions, Listening, Options } from "./internal/types.js"

export type {
  /**
   * A kind to serve besides the built-in ones. Any `Resource` value fits.
   *
   * @since 0.1.0
   * @category models
   */
  ResourceSpec
} from "./internal/types.js"

export type {
  /**
   * How simulated pods and jobs progress (`simulate: true` uses the defaults).
   *
   * @since 0.1.0
   * @category models
   */
  SimulateOptions
} from "./internal/types.js"

export type {
  /**
   * Options of a fake cluster: namespace, token, custom resources, seed objects, simulation,
   * and what exec, attach and port-forward reach.
   *
   * @since 0.1.0
   * @category models
   */
  Options
} from "./internal/types.js"

export type {
  /**
   * Identifies an object for the controls (`kind` may be the plural).
   *
   * @since 0.1.0
   * @category models
   */
  ObjectRef
} from "./internal/types.js"

export type {
  /**
   * A stored object as the controls return it (a deep copy).
   *
   * @since 0.1.0
   * @category models
   */
  FakeObject
} from "./internal/types.js"

export type {
  /**
   * One request the fake received.
   *
   * @since 0.1.0
   * @category models
   */
  RequestRecord
} from "./internal/types.js"

export type {
  /**
   * An audit annotation a ValidatingAdmissionPolicy recorded for a write.
   *
   * @since 0.2.0
   * @category models
   */
  AuditAnnotation
} from "./internal/types.js"

export type {
  /**
   * Chooses the requests a fault applies to.
   *
   * @since 0.1.0
   * @category models
   */
  RequestMatch
} from "./internal/types.js"

export type {
  /**
   * Which requests a fault applies to and how many: `count` (`Infinity`: until
   * `clearFaults()`), `method`, a `path` prefix or RegExp, and `match`.
   *
   * @since 0.2.0
   * @category models
   */
  FaultMatching
} from "./internal/types.js"

export type {
  /**
   * The controls tests use to set up and inspect state and to inject faults.
   *
   * @since 0.1.0
   * @category models
   */
  Control
} from "./internal/types.js"

export type {
  /**
   * What a command run by the fake sees: stdin, stdout and stderr writers, tty resizes, env.
   *
   * @since 0.1.0
   * @category models
   */
  ExecIo
} from "./internal/types.js"

export type {
  /**
   * A container's behaviour for `exec` and `attach` (`Options.exec`, `Options.attach`), in
   * `layer` (in memory) and `serve` (over WebSocket) alike: its exit code, or `undefined`
   * to use the built-ins (`echo`, `cat`, `env`, `exit N`, `sh -c "..."`, `true`, `false`,
   * `sleep N`).
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { FakeCluster } from "@effect-kube/testing"
   *
   * FakeCluster.layer({
   *   exec: (pod, container, command, io) =>
   *     command[0] === "whoami" ? Effect.as(io.stdout("root\n"), 0) : undefined
   * })
   * ```
   * @since 0.1.0
   * @category models
   */
  ExecHandler
} from "./internal/types.js"

export type {
  /**
   * One forwarded connection, as a fake port handler sees it.
   *
   * @since 0.1.0
   * @category models
   */
  PortConnection
} from "./internal/types.js"

export type {
  /**
   * What listens on a pod's port for port-forward (`Options.portForward`): the default
   * echoes every byte back; a failure is sent on the port's error channel.
   *
   * @since 0.1.0
   * @category models
   */
  PortForwardHandler
} from "./internal/types.js"

export type {
  /**
   * What `Options.proxy` answers: the target of a `proxy` request and the answer it gets.
   *
   * @since 0.2.0
   * @category models
   */
  ProxyAnswer,
  /**
   * A request through the `proxy` subresource of a pod, service or node (`Options.proxy`).
   *
   * @since 0.2.0
   * @category models
   */
  ProxyRequest
} from "./internal/types.js"

/**
 * The `FakeCluster` service: the controls plus the in-memory handler and its URL.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service extends Control {
  /** The server URL in the layer's KubeConfig, e.g. `http://fake-cluster.local`. */
  readonly url: string
  /** Answers a web `Request` in memory. */
  readonly handle: (request: Request) => Promise<Response>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class FakeCluster extends Context.Service<FakeCluster, Service>()("effect-kube/testing/FakeCluster") {}

/**
 * A fake API server without Effect: a web-standard handler and the controls.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  readonly handle: (request: Request) => Promise<Response>
  readonly control: Control
  /** Stops timers and ends open watches and log streams. */
  readonly close: () => void
}

export type {
  /**
   * Where and how `listen` / `serve` listen: port, host, TLS, kubeconfig directory.
   *
   * @since 0.1.0
   * @category models
   */
  ListenOptions
} from "./internal/types.js"

export type {
  /**
   * A fake served on loopback.
   *
   * @since 0.1.0
   * @category models
   */
  Listening
} from "./internal/types.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Served extends Listening {
  readonly control: Control
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions extends Options, ListenOptions {}

/**
 * A fake cluster could not be served, and nothing was left open:
 *
 * - `"Tls"`: the server could not be created from the given certificate and key;
 * - `"Listen"`: the address could not be bound (a port in use, an address not on this
 *   machine, a privileged port);
 * - `"Kubeconfig"`: the kubeconfig could not be written (e.g. `kubeconfigDir` does not exist);
 * - `"UnknownServer"`: `listen` was given a `Server` that `makeServer` did not build.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const served = FakeCluster.serve({ port: 6443 }).pipe(
 *   Effect.catchTag("FakeClusterError", (e) =>
 *     e.reason === "Listen" ? FakeCluster.serve() : Effect.fail(e))
 * )
 * ```
 * @since 0.1.0
 * @category errors
 */
export class FakeClusterError extends Data.TaggedError("FakeClusterError")<{
  readonly reason: "Tls" | "Listen" | "Kubeconfig" | "UnknownServer"
  /** What was to be served: `host:port` before binding, the URL after. */
  readonly address: string
  readonly cause?: unknown
}> {
  override get message(): string {
    const attempt = this.reason === "Tls"
      ? `create a TLS server for ${this.address} from the given certificate and key`
      : this.reason === "Listen"
      ? `listen on ${this.address}`
      : this.reason === "Kubeconfig"
      ? `write the kubeconfig for ${this.address}`
      : `serve ${this.address}: listen takes a server built by FakeCluster.makeServer`
    const cause = this.cause instanceof Error ? this.cause.message : this.cause === undefined ? "" : String(this.cause)
    return `FakeCluster could not ${attempt}${cause === "" ? "" : `: ${cause}`}`
  }
}

const listenFailure = (options: ListenOptions, cause: unknown): FakeClusterError =>
  cause instanceof FakeClusterError
    ? cause
    : new FakeClusterError({ reason: "Listen", address: `${options.host ?? "127.0.0.1"}:${options.port ?? 0}`, cause })

const servers = new WeakMap<Server, Internal.FakeServer>()

/**
 * Builds a fake API server (no Effect, no network). Close it when done.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeServer = (options: Options = {}): Server => makeServerOn(options, undefined)

/** A server whose timers run on the Effect `Clock` of the effect that makes it (the TestClock in `it.effect`). */
const clockedServer = (options: Options): Effect.Effect<Server> =>
  Effect.map(Effect.context<never>(), (context) => makeServerOn(options, effectClock(context)))

/** A server whose timers run on `clock` (the machine's when undefined). */
const makeServerOn = (options: Options, clock: FakeClock | undefined): Server => {
  const server = new Internal.FakeServer(options, clock)
  const value: Server = {
    handle: (request) => server.handle(request),
    control: server.control,
    close: () => server.close()
  }
  servers.set(value, server)
  return value
}

/**
 * Serves a fake on loopback (no Effect), for benchmark scripts and other clients.
 * Rejects with a `FakeClusterError` when it cannot.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listen = (server: Server, options: ListenOptions = {}): Promise<Listening> => {
  const internal = servers.get(server)
  if (internal === undefined) {
    return Promise.reject(new FakeClusterError({ reason: "UnknownServer", address: "a Server value" }))
  }
  return Node.listen(internal, options).catch((e: unknown) => {
    throw e instanceof Node.ServeFailure
      ? new FakeClusterError({ reason: e.reason, address: e.address, cause: e.cause })
      : listenFailure(options, e)
  })
}

const defaultUrl = "http://fake-cluster.local"
const defaultToken = "fake-cluster-token"

const decoder = new TextDecoder()

const encodeError = (request: HttpClientRequest.HttpClientRequest, cause: unknown, description?: string) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.EncodeError(
      description === undefined ? { request, cause } : { request, cause, description }
    )
  })

const bodyText = (
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<string, HttpClientError.HttpClientError> => {
  const body = request.body
  switch (body._tag) {
    case "Empty":
      return Effect.succeed("")
    case "Uint8Array":
      return Effect.succeed(decoder.decode(body.body))
    case "Raw":
      return Effect.succeed(
        typeof body.body === "string"
          ? body.body
          : body.body instanceof Uint8Array
          ? decoder.decode(body.body)
          : String(body.body)
      )
    case "Stream":
      return Stream.runFold(body.stream, () => "", (acc, chunk) => acc + decoder.decode(chunk, { stream: true })).pipe(
        Effect.mapError((cause) => encodeError(request, cause))
      )
    case "FormData":
      return Effect.fail(
        encodeError(request, "the fake cluster does not accept form data", "the fake cluster does not accept form data")
      )
  }
}

/**
 * An `HttpClient` answered in memory by a server. Aborting a request (interruption)
 * cancels a streaming body, so the server drops the watch or log follower.
 *
 * Any `Server` works: one built by `makeServer` is answered directly, any other (a
 * wrapper around one, say) through its `handle`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpClient = (server: Server): HttpClient.HttpClient => {
  const internal = servers.get(server)
  const answer = (
    request: HttpClientRequest.HttpClientRequest,
    url: URL,
    text: string,
    signal: AbortSignal
  ): Promise<HttpClientResponse.HttpClientResponse> => {
    if (internal === undefined) {
      const withBody = text !== "" && request.method !== "GET" && request.method !== "HEAD"
      return server.handle(
        new Request(url, { method: request.method, headers: request.headers, body: withBody ? text : null, signal })
      ).then((response) => HttpClientResponse.fromWeb(request, response))
    }
    return internal.handleRaw({
      method: request.method,
      url: url.pathname + url.search,
      header: (name) => request.headers[name.toLowerCase()],
      text: () => Promise.resolve(text),
      signal
    }).then((raw) =>
      raw.reset !== undefined
        ? HttpClientResponse.fromWeb(request, Http.toWebResponse(raw, signal))
        : raw.body === undefined || typeof raw.body === "string"
        ? textResponse(request, url, raw.status, raw.headers, raw.status === 204 ? undefined : raw.body ?? "")
        : streamResponse(request, url, raw.status, raw.headers, raw.body, signal)
    )
  }
  return HttpClient.make((request, url, signal) =>
    Effect.flatMap(bodyText(request), (text) =>
      Effect.tryPromise({
        try: () => answer(request, url, text, signal),
        catch: (cause) =>
          new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })
      }))
  )
}

const kubeConfigFor = (url: string, options: Options): KubeConfig.Service => ({
  server: url,
  namespace: options.namespace ?? "default",
  tls: { insecureSkipTlsVerify: false },
  auth: {
    kind: "token",
    credentials: Effect.succeed({ token: Redacted.make(options.token ?? defaultToken) }),
    invalidate: Effect.succeed(false)
  },
  context: "fake-cluster",
  source: "<explicit>"
})

/**
 * Provides `KubeConfig`, an in-memory `HttpClient` and the `FakeCluster` controls.
 * The fake is closed with the layer's scope.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<FakeCluster | KubeConfig.KubeConfig | HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(clockedServer(options), (s) => Effect.sync(() => s.close()))
      const service: Service = { ...server.control, url: defaultUrl, handle: server.handle }
      return Context.make(FakeCluster, service).pipe(
        Context.add(KubeConfig.KubeConfig, kubeConfigFor(defaultUrl, options)),
        Context.add(HttpClient.HttpClient, httpClient(server)),
        Context.add(WebSocketDialer, FakeExec.inMemoryDialer(servers.get(server)!))
      )
    })
  )

/**
 * The fake on a loopback HTTP(S) server, with a kubeconfig written for it; closed with
 * the scope (sockets destroyed, kubeconfig removed). Fails with a `FakeClusterError`
 * when it cannot be served (a port in use, an address not on this machine, a bad
 * certificate, an unwritable kubeconfig directory). `tls: "self-signed"` serves HTTPS as a
 * real cluster does: a CA made for this server signs its certificate and goes into the
 * kubeconfig, so kubectl and every other client verify it (plain HTTP without `tls`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Kube, NodeKube } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const served = yield* FakeCluster.serve({ tls: "self-signed", token: "t" }) // kubectl --kubeconfig served.kubeconfigPath
 *   assert.ok(served.url.startsWith("https://"))
 *   const { items } = yield* Kube.api(ConfigMaps, { namespace: "default" }).list().pipe(
 *     Effect.provide(NodeKube.layerFromFile({ path: served.kubeconfigPath }))
 *   )
 *   // as on a cluster, every namespace holds the ConfigMap of the cluster's CA
 *   assert.deepStrictEqual(items.map((cm) => cm.metadata?.name), ["kube-root-ca.crt"])
 * }))
 *
 * Effect.runPromise(program)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (options: ServeOptions = {}): Effect.Effect<Served, FakeClusterError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.flatMap(clockedServer(options), (server) =>
      Effect.tryPromise({
        try: () => listen(server, options),
        catch: (cause) => listenFailure(options, cause)
      }).pipe(
        Effect.tapError(() => Effect.sync(() => server.close())),
        Effect.map((listening) => ({ server, listening }))
      )),
    ({ listening, server }) =>
      Effect.promise(async () => {
        server.close()
        await listening.close()
      })
  ).pipe(Effect.map(({ listening, server }): Served => ({ ...listening, control: server.control })))
