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
 * import { Effect } from "effect"
 * import { Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   const cluster = yield* FakeCluster.FakeCluster
 *   cluster.seed([{ apiVersion: "v1", kind: "Pod", metadata: { name: "web", labels: { app: "web" } } }])
 *   const pods = yield* Kube.api(Pods).list({ labelSelector: "app=web" })
 *   cluster.setPodPhase("default", "web", "Running")
 * }).pipe(Effect.provide(FakeCluster.layer()))
 * ```
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as KubeConfig from "../KubeConfig.js"
import { WebSocketDialer } from "../internal/exec/dialer.js"
import * as FakeExec from "../internal/fake/exec.js"
import * as Node from "../internal/fake/node.js"
import * as Internal from "../internal/fake/server.js"

/**
 * A kind to serve besides the built-in ones. Any `Resource` value fits.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceSpec {
  /** `<group>/<version>`. */
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  readonly shortNames?: ReadonlyArray<string> | undefined
  readonly singular?: string | undefined
}

/**
 * How simulated pods and jobs progress (`simulate: true` uses the defaults).
 *
 * @since 0.1.0
 * @category models
 */
export interface SimulateOptions {
  /** Milliseconds from a pod's creation to Running (default 50). */
  readonly podStartMs?: number | undefined
  /** Milliseconds from Running to Succeeded (default 150). */
  readonly podRunMs?: number | undefined
  /** Whether running pods go on to Succeeded (default true). */
  readonly completePods?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The kubeconfig's namespace, and the namespace controls use when a ref has none. Default `default`. */
  readonly namespace?: string | undefined
  /**
   * A bearer token every request must carry (401 otherwise). Without it any request is
   * accepted; the layer's KubeConfig still presents the token `fake-cluster-token`.
   */
  readonly token?: string | undefined
  /** Custom resources to serve (and list in discovery) from the start. */
  readonly resources?: ReadonlyArray<ResourceSpec> | undefined
  /** Objects to seed, as `seed` does. */
  readonly objects?: ReadonlyArray<unknown> | undefined
  /** Namespaces to create besides `default`, `kube-system`, `kube-public`, `kube-node-lease`. */
  readonly namespaces?: ReadonlyArray<string> | undefined
  /**
   * How many changes the event history keeps (default 1000). A watch or continue token
   * from a resourceVersion older than that answers 410 Expired.
   */
  readonly compactionWindow?: number | undefined
  /** Interval of BOOKMARK events to watches that allow them (ms, default 60000; 0 disables). */
  readonly bookmarkIntervalMs?: number | undefined
  /** Created pods go Pending -> Running -> Succeeded (writing a few log lines) and jobs complete. */
  readonly simulate?: boolean | SimulateOptions | undefined
  /** How many requests the request log keeps (default 100000, oldest dropped). */
  readonly maxRequestLog?: number | undefined
  /**
   * What `exec` runs in a container: an exit code, or `undefined` for the built-ins (`echo`, `cat`,
   * `env`, `exit N`, `sh -c "..."`, `true`, `false`, `sleep N`; anything else exits 127).
   */
  readonly exec?: ExecHandler | undefined
  /** The main process `attach` reaches (default: the container's command run as `exec` would, else `cat`). */
  readonly attach?: ExecHandler | undefined
  /** What listens on a pod's ports for port-forward (default: an echo of every byte). */
  readonly portForward?: PortForwardHandler | undefined
  /** The subprotocols the fake speaks for exec and attach (default v5 and v4; `["v4.channel.k8s.io"]` for an old server). */
  readonly execProtocols?: ReadonlyArray<string> | undefined
}

/**
 * What a command run by the fake sees: stdin, stdout and stderr writers, tty resizes, env.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecIo = FakeExec.ExecIo

/**
 * A container's behaviour for `exec` and `attach`: its exit code, or `undefined` to use the built-ins.
 *
 * @example
 * ```ts
 * FakeCluster.layer({
 *   exec: (pod, container, command, io) =>
 *     command[0] === "whoami" ? Effect.as(io.stdout("root\n"), 0) : undefined
 * })
 * ```
 * @since 0.1.0
 * @category models
 */
export type ExecHandler = FakeExec.ExecHandler

/**
 * One forwarded connection, as a fake port handler sees it.
 *
 * @since 0.1.0
 * @category models
 */
export type PortConnection = FakeExec.PortConnection

/**
 * What listens on a pod's port for port-forward.
 *
 * @since 0.1.0
 * @category models
 */
export type PortForwardHandler = FakeExec.PortForwardHandler

/**
 * Identifies an object for the controls. `kind` may also be the plural (`pods`);
 * `namespace` defaults to the cluster's namespace for namespaced kinds.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
}

/**
 * A stored object as the controls return it (a deep copy).
 *
 * @since 0.1.0
 * @category models
 */
export type FakeObject = Internal.FakeObject

/**
 * One request the fake received.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestRecord {
  readonly method: string
  /** The path without the query. */
  readonly path: string
  /** Query parameters (the first value of each). */
  readonly query: Readonly<Record<string, string>>
  readonly contentType?: string | undefined
  readonly userAgent?: string | undefined
}

/**
 * Chooses the requests a fault applies to.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestMatch = (method: string, path: string, query: Readonly<Record<string, string>>) => boolean

/**
 * The controls tests use to set up and inspect state and to inject faults. Plain
 * synchronous functions: call them inside `Effect.gen` or from scripts alike. Changes
 * made through them bump resourceVersions and reach open watches like any write.
 *
 * @since 0.1.0
 * @category models
 */
export interface Control {
  /** Stores objects as given (status included); missing namespace, uid, timestamps are filled in. */
  readonly seed: (objects: ReadonlyArray<unknown>) => ReadonlyArray<FakeObject>
  readonly get: (ref: ObjectRef) => FakeObject | undefined
  /** The objects of a kind, sorted by namespace and name; all namespaces when `namespace` is undefined. */
  readonly list: (apiVersion: string, kindOrPlural: string, namespace?: string | undefined) => ReadonlyArray<FakeObject>
  /**
   * A server-side change: a JSON merge patch (`{ status: { phase: "Running" } }`) or a
   * function that edits (or returns) a copy. Throws when the object does not exist.
   */
  readonly update: (
    ref: ObjectRef,
    change: { readonly [key: string]: unknown } | ((obj: FakeObject) => FakeObject | void)
  ) => FakeObject
  /** Deletes at once (finalizers ignored); `false` when there was none. */
  readonly remove: (ref: ObjectRef) => boolean
  /** Serves one more custom resource (discovery lists it from now on). */
  readonly registerResource: (resource: ResourceSpec) => void
  /** The current (last issued) resourceVersion. */
  readonly resourceVersion: () => string
  /** Every request received (after `reset`), oldest first. */
  readonly requests: () => ReadonlyArray<RequestRecord>
  /**
   * How many non-GET requests reached a resource (failed ones included; those answered by
   * `failNext`/`stallNext`, a 401, or an unknown path, and `processedtemplates`, excluded).
   */
  readonly mutations: () => number
  /** Clears the request log, the mutation count and pending faults. The store is kept. */
  readonly reset: () => void
  /** Changes (or with `undefined` removes) the bearer token requests must carry. */
  readonly setToken: (token: string | undefined) => void
  /**
   * Sets a pod's phase with the conditions and container statuses a kubelet would
   * report (Ready when Running). Succeeded / Failed also end its containers' logs.
   */
  readonly setPodPhase: (
    namespace: string,
    name: string,
    phase: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown",
    options?: { readonly reason?: string | undefined; readonly message?: string | undefined }
  ) => FakeObject
  /** Marks a Job complete: `succeeded`, `completionTime`, conditions SuccessCriteriaMet and Complete. */
  readonly completeJob: (namespace: string, name: string) => FakeObject
  /** Marks a Job failed: conditions FailureTarget and Failed (reason BackoffLimitExceeded by default). */
  readonly failJob: (
    namespace: string,
    name: string,
    options?: { readonly reason?: string | undefined; readonly message?: string | undefined }
  ) => FakeObject
  /**
   * Appends to a container's log: an array is whole lines, a string is raw text (it may
   * end in a partial line). The container defaults to the pod's only one.
   */
  readonly appendLog: (
    namespace: string,
    pod: string,
    text: string | ReadonlyArray<string>,
    options?: { readonly container?: string | undefined }
  ) => void
  /**
   * Ends a container: followers of its log see the end; its status becomes terminated.
   * With `restart: true` a new instance starts and the old log becomes `previous`.
   */
  readonly endContainer: (
    namespace: string,
    pod: string,
    options?: {
      readonly container?: string | undefined
      readonly exitCode?: number | undefined
      readonly restart?: boolean | undefined
    }
  ) => void
  /** The next `count` (default 1) matching requests answer this status with the API server's Status body. */
  readonly failNext: (options: {
    readonly status: number
    readonly count?: number | undefined
    /** Sent as `Retry-After` and `details.retryAfterSeconds`. */
    readonly retryAfterSeconds?: number | undefined
    readonly message?: string | undefined
    readonly reason?: string | undefined
    readonly match?: RequestMatch | undefined
  }) => void
  /**
   * The next `count` matching requests are carried out, then their connection is reset:
   * before any answer when `afterBytes` is undefined, else after that many body bytes
   * (layer: the response body fails; serve: the socket is destroyed).
   */
  readonly resetNext: (options?: {
    readonly count?: number | undefined
    readonly afterBytes?: number | undefined
    readonly match?: RequestMatch | undefined
  }) => void
  /** The next `count` matching requests are carried out, then answered `ms` later. */
  readonly delayNext: (options: {
    readonly ms: number
    readonly count?: number | undefined
    readonly match?: RequestMatch | undefined
  }) => void
  /** The next `count` matching requests are never answered (nor carried out) until the client gives up. */
  readonly stallNext: (
    options?: { readonly count?: number | undefined; readonly match?: RequestMatch | undefined }
  ) => void
  /** Drops pending faults and the watch drop limit. */
  readonly clearFaults: () => void
  /**
   * Every watch (open or future) ends, without a final event, once it has sent this many
   * events (initial ADDED and bookmarks included). `undefined` lifts the limit.
   */
  readonly dropWatchesAfter: (events: number | undefined) => void
  /** Sends every open watch an ERROR event with a 410 Expired Status, then ends it. */
  readonly expireWatches: () => void
  /** Drops the event history: watches and continue tokens from any older resourceVersion answer 410. */
  readonly compact: () => void
  /** Sends a BOOKMARK now to every open watch that allows bookmarks. */
  readonly bookmark: () => void
  /** Watch streams currently open (a client that goes away closes its watch). */
  readonly openWatches: () => number
  /** Followed log streams currently open. */
  readonly openLogStreams: () => number
}

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
export class FakeCluster extends Context.Tag("effect-kube/testing/FakeCluster")<FakeCluster, Service>() {}

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

/**
 * @since 0.1.0
 * @category models
 */
export interface ListenOptions {
  /** PEM certificate and key of the server; `ca` (the issuer) goes into the kubeconfig. Plain HTTP without. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca?: string | undefined } | undefined
  /** 0 (default) picks a free port. */
  readonly port?: number | undefined
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Where to write the kubeconfig; a new temporary directory by default. */
  readonly kubeconfigDir?: string | undefined
}

/**
 * A fake served on loopback.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listening {
  /** `https://127.0.0.1:<port>` (or `http://`). */
  readonly url: string
  /** A kubeconfig file for this server: its URL, CA, token and namespace. */
  readonly kubeconfigPath: string
  readonly kubeconfig: string
  /** Sockets currently open to the server. */
  readonly openConnections: () => number
  /** Closes the server, destroys open sockets and removes the kubeconfig. */
  readonly close: () => Promise<void>
}

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

const servers = new WeakMap<Server, Internal.FakeServer>()

/**
 * Builds a fake API server (no Effect, no network). Close it when done.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeServer = (options: Options = {}): Server => {
  const server = new Internal.FakeServer(options)
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
 *
 * @since 0.1.0
 * @category constructors
 */
export const listen = (server: Server, options: ListenOptions = {}): Promise<Listening> => {
  const internal = servers.get(server)
  if (internal === undefined) return Promise.reject(new Error("listen: the server was not built by makeServer"))
  return Node.listen(internal, options)
}

const defaultUrl = "http://fake-cluster.local"
const defaultToken = "fake-cluster-token"

const decoder = new TextDecoder()

const bodyText = (
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<string, HttpClientError.RequestError> => {
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
      return Stream.runFold(body.stream, "", (acc, chunk) => acc + decoder.decode(chunk, { stream: true })).pipe(
        Effect.mapError((cause) => new HttpClientError.RequestError({ request, reason: "Encode", cause }))
      )
    case "FormData":
      return Effect.fail(
        new HttpClientError.RequestError({
          request,
          reason: "Encode",
          cause: "the fake cluster does not accept form data"
        })
      )
  }
}

/**
 * An `HttpClient` answered in memory by a server. Aborting a request (interruption)
 * cancels a streaming body, so the server drops the watch or log follower.
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpClient = (server: Server): HttpClient.HttpClient => {
  const internal = servers.get(server)!
  return HttpClient.make((request, url, signal) =>
    Effect.flatMap(bodyText(request), (text) =>
      Effect.tryPromise({
        try: async () => {
          const raw = await internal.handleRaw({
            method: request.method,
            url: url.pathname + url.search,
            header: (name) => request.headers[name.toLowerCase()],
            text: () => Promise.resolve(text),
            signal
          })
          return Internal.toWebResponse(raw, signal)
        },
        catch: (cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause })
      })).pipe(Effect.map((response) => HttpClientResponse.fromWeb(request, response)))
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
  Layer.scopedContext(
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.sync(() => makeServer(options)),
        (s) => Effect.sync(() => s.close())
      )
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
 * the scope (sockets destroyed, kubeconfig removed).
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (options: ServeOptions = {}): Effect.Effect<Served, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = makeServer(options)
      try {
        const listening = await listen(server, options)
        return { server, listening }
      } catch (e) {
        server.close()
        throw e
      }
    }),
    ({ listening, server }) =>
      Effect.promise(async () => {
        server.close()
        await listening.close()
      })
  ).pipe(Effect.map(({ listening, server }): Served => ({ ...listening, control: server.control })))
