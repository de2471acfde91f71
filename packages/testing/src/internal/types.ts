/**
 * The shapes the fake cluster and its public module share: options, object refs, the
 * control surface and the loopback listener. Declared here, below both the fake's
 * implementation and its public module (`FakeCluster.ts`), which re-exports them, so that neither
 * imports the other.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

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
 * The older way to make pods run by themselves (`simulate: true` uses the defaults): the
 * kubelet with these times, writing a few log lines per container, and (unless
 * `completePods: false`) letting every container exit 0 after `podRunMs`. What follows is
 * what a kubelet does by the pod's `restartPolicy`: `Never` and `OnFailure` pods go to
 * Succeeded; `Always` pods (the default, and every Deployment's) stay Running while their
 * containers restart, at once the first time, then after the kubelet's back-off (10s
 * doubling to 5 minutes, CrashLoopBackOff and not ready meanwhile), `restartCount` growing.
 *
 * @since 0.1.0
 * @category models
 */
export interface SimulateOptions {
  /** Milliseconds from a pod's scheduling to Running (default 50). */
  readonly podStartMs?: number | undefined
  /** Milliseconds a container runs before it exits 0 (default 150). */
  readonly podRunMs?: number | undefined
  /** Whether the containers of pods that restart (`Always`) exit too, and restart (default true). */
  readonly completePods?: boolean | undefined
}

/**
 * How the fake kubelet runs the pods scheduled to its node. Every time is on the fake's
 * clock (the Effect `Clock`: `TestClock.adjust` steps it in `it.effect`).
 *
 * @since 0.2.0
 * @category models
 */
export interface KubeletOptions {
  /** The node the kubelet registers and the scheduler binds pods to (default `fake-node`). */
  readonly nodeName?: string | undefined
  /** Milliseconds from a pod's scheduling to Running and Ready (default 50). */
  readonly podStartMs?: number | undefined
  /**
   * Milliseconds the containers of a pod that does not restart (`restartPolicy` Never or
   * OnFailure) run before they exit 0 (default 150); `Infinity` runs them until deleted.
   * Pods that restart (`Always`, the default) run until deleted.
   */
  readonly podRunMs?: number | undefined
  /** Milliseconds a deleted pod's containers take to stop, at most its grace period (default 50). */
  readonly podStopMs?: number | undefined
}

/**
 * The core controllers and the kubelet, each on unless turned off (`false`), so that a
 * test can play one itself. `controllers: false` turns them all off.
 *
 * @since 0.2.0
 * @category models
 */
export interface ControllerOptions {
  /** Binds new pods to the kubelet's node (`spec.nodeName`, PodScheduled). */
  readonly scheduler?: boolean | undefined
  /** Runs the pods bound to its node: Running, Ready, exits, stops deleted pods, ephemeral containers, resizes. */
  readonly kubelet?: boolean | KubeletOptions | undefined
  /** Deployments: ReplicaSets per template, rolling updates and Recreate, revisions, status and conditions. */
  readonly deployment?: boolean | undefined
  /** ReplicaSets: pods to match `replicas`, adoption of matching orphans, status. */
  readonly replicaSet?: boolean | undefined
  /** Jobs: pods up to `parallelism` until `completions` succeed or `backoffLimit` is passed, status, conditions. */
  readonly job?: boolean | undefined
  /**
   * Deleting a namespace deletes its contents, then the namespace; `contentDeletionDelayMs`
   * (default 500) is how long the controller takes to start, as on a cluster, where
   * `kubectl delete -f` of a file that starts with its Namespace still finds the rest.
   */
  readonly namespace?: boolean | { readonly contentDeletionDelayMs?: number | undefined } | undefined
  /** Every namespace gets the ServiceAccount `default`. */
  readonly serviceAccount?: boolean | undefined
  /** Every namespace gets the ConfigMap `kube-root-ca.crt` (the cluster's CA). */
  readonly rootCaPublisher?: boolean | undefined
  /** CustomResourceDefinitions become NamesAccepted and Established; deleting one deletes its objects first. */
  readonly crd?: boolean | undefined
  /** PodDisruptionBudgets get their status (healthy pods, disruptions allowed, DisruptionAllowed). */
  readonly disruption?: boolean | undefined
  /** Services with a selector get EndpointSlices of their ready pods. */
  readonly endpointSlice?: boolean | undefined
  /** Dependents go with their owners (background, foreground) or are orphaned, by `ownerReferences`. */
  readonly garbageCollector?: boolean | undefined
  /**
   * New PersistentVolumeClaims and PersistentVolumes get the `kubernetes.io/pvc-protection` and `pv-protection`
   * finalizers; a deleted claim goes once no running pod uses it, a deleted volume once it is not Bound.
   */
  readonly storageProtection?: boolean | undefined
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
   * Writing into a namespace that does not exist creates it (default false: 404
   * `namespaces "x" not found`, as a cluster answers).
   */
  readonly autoCreateNamespaces?: boolean | undefined
  /** The core controllers and the kubelet (all on by default); `false` turns them all off. */
  readonly controllers?: boolean | ControllerOptions | undefined
  /**
   * Whether writes are validated as kube-apiserver validates them (default true: a 422
   * Invalid with the server's message and a cause per field). `false` stores what a write
   * sends once decoded, pruned and defaulted: for tests that send made-up objects to
   * exercise a client, never to stand in for a cluster.
   */
  readonly validation?: boolean | undefined
  /**
   * How many changes the event history keeps (default 1000). A watch or continue token
   * from a resourceVersion older than that answers 410 Expired.
   */
  readonly compactionWindow?: number | undefined
  /**
   * Features of kube-apiserver that can be turned off, to test a client against an older
   * or differently configured server. `watchList: false` (default true, as kube-apiserver
   * v1.34+ with its WatchList gate on): a watch with `sendInitialEvents` answers 422
   * Invalid, as a server with the gate off does. `aggregatedDiscovery: false` (default
   * true, as kube-apiserver v1.30+): `/api` and `/apis` answer only their legacy index
   * (APIVersions, APIGroupList), as a server before aggregated discovery does, and 406
   * when the Accept allows nothing else.
   */
  readonly features?: {
    readonly watchList?: boolean | undefined
    readonly aggregatedDiscovery?: boolean | undefined
  } | undefined
  /** Interval of BOOKMARK events to watches that allow them (ms, default 60000; 0 disables). */
  readonly bookmarkIntervalMs?: number | undefined
  /** Pods go Pending -> Running -> Succeeded whatever their restart policy, writing a few log lines (see `SimulateOptions`). */
  readonly simulate?: boolean | SimulateOptions | undefined
  /** How many requests the request log keeps (default 100000, oldest dropped). */
  readonly maxRequestLog?: number | undefined
  /**
   * What `exec` runs in a container (over WebSocket, the `v5.channel.k8s.io` /
   * `v4.channel.k8s.io` protocol kubectl speaks; in-memory for `FakeCluster.layer`):
   * the exit code, or `undefined` for the built-ins (`echo`, `cat`, `env`, `exit N`,
   * `sh -c "..."`, `true`, `false`, `sleep N`; anything else exits 127).
   */
  readonly exec?: ExecHandler | undefined
  /** The main process `attach` reaches (default: the container's command run as `exec` would, else `cat`). */
  readonly attach?: ExecHandler | undefined
  /** What listens on a pod's ports for port-forward (`v4.channel.k8s.io`; default: an echo of every byte). */
  readonly portForward?: PortForwardHandler | undefined
  /** The subprotocols the fake speaks for exec and attach (default v5 and v4; `["v4.channel.k8s.io"]` for an old server). */
  readonly execProtocols?: ReadonlyArray<string> | undefined
  /**
   * What answers the `proxy` subresource of pods, services and nodes (default: nothing
   * listens, and the fake answers 503 as the API server does).
   */
  readonly proxy?: ((request: ProxyRequest) => ProxyAnswer | Promise<ProxyAnswer>) | undefined
  /**
   * Who the layer's token (and `serve`'s kubeconfig) authenticates: a user with groups, or
   * a service account. Default: the fake's admin, `fake-admin` in `system:masters`.
   * Giving one turns `authorization` to `"RBAC"` unless it says otherwise.
   */
  readonly user?: FakeUser | undefined
  /**
   * `"RBAC"`: requests are authorized as kube-apiserver's RBAC authorizer does, from the
   * Roles, ClusterRoles and bindings stored (the bootstrap policy is seeded: cluster-admin
   * for `system:masters`, discovery and the self reviews for every authenticated user);
   * a denial is the API server's 403. `"AlwaysAllow"` (the default without `user`): every
   * request is allowed. Either way each access is logged (`Control.accessLog`).
   */
  readonly authorization?: "RBAC" | "AlwaysAllow" | undefined
}

/**
 * Who a fake's token authenticates (`Options.user`): a user by name with its groups
 * (`system:authenticated` is added), or a service account, whose user is
 * `system:serviceaccount:<namespace>:<name>` in the groups the API server gives it.
 *
 * @since 0.2.0
 * @category models
 */
export type FakeUser =
  | { readonly name: string; readonly groups?: ReadonlyArray<string> | undefined; readonly uid?: string | undefined }
  | { readonly serviceAccount: { readonly namespace: string; readonly name: string } }

/**
 * One access the fake decided: who, and what as the API server's authorizer sees it (a
 * resource request's verb, API group, resource, subresource, namespace and name; a
 * non-resource request's verb and path), and whether it was allowed.
 *
 * @since 0.2.0
 * @category models
 */
export type AccessRecord =
  & { readonly user: string; readonly groups: ReadonlyArray<string>; readonly allowed: boolean }
  & (
    | {
      readonly resourceRequest: true
      readonly verb: string
      readonly apiGroup: string
      readonly apiVersion: string
      readonly resource: string
      /** `""` when none. */
      readonly subresource: string
      /** `""` for a cluster-scoped resource or a list across namespaces. */
      readonly namespace: string
      /** `""` when the request names no object (a list, a create). */
      readonly name: string
    }
    | { readonly resourceRequest: false; readonly verb: string; readonly path: string }
  )

/**
 * What a command run by the fake sees: its stdin (ends when the client closes it, v5, or
 * goes away), writers for stdout and stderr, the terminal's size changes under a tty,
 * and the container's environment.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecIo {
  readonly stdin: Stream.Stream<Uint8Array>
  readonly stdout: (data: Uint8Array | string) => Effect.Effect<void>
  readonly stderr: (data: Uint8Array | string) => Effect.Effect<void>
  readonly tty: boolean
  readonly resizes: Stream.Stream<{ readonly columns: number; readonly rows: number }>
  /** The container's environment (`spec.containers[].env` plain values, and `HOSTNAME`). */
  readonly env: Readonly<Record<string, string>>
}

/**
 * A container's behaviour for `exec` and `attach`: the exit code, or `undefined` to use the
 * built-in commands. A failure of the effect is reported on the error channel as an
 * InternalError Status.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecHandler = (
  pod: FakeObject,
  container: string,
  command: ReadonlyArray<string>,
  io: ExecIo
) => Effect.Effect<number, unknown> | undefined

/**
 * One forwarded connection, as a fake port handler sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PortConnection {
  /** What the client sends; ends when the client goes away. */
  readonly read: Stream.Stream<Uint8Array>
  readonly write: (data: Uint8Array | string) => Effect.Effect<void>
}

/**
 * What listens on a pod's port for port-forward: the default echoes every byte back. A
 * failure is sent on the port's error channel.
 *
 * @since 0.1.0
 * @category models
 */
export type PortForwardHandler = (pod: FakeObject, port: number, connection: PortConnection) => Effect.Effect<void, unknown>

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
export interface FakeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: {
    readonly name: string
    readonly namespace?: string | undefined
    readonly uid: string
    readonly resourceVersion: string
    readonly generation?: number | undefined
    readonly creationTimestamp: string
    readonly labels?: { readonly [key: string]: string } | undefined
    readonly annotations?: { readonly [key: string]: string } | undefined
    readonly [key: string]: unknown
  }
  readonly [key: string]: unknown
}

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
  /** The request's `Accept-Encoding` header, when it sent one. */
  readonly acceptEncoding?: string | undefined
}

/**
 * An audit annotation a ValidatingAdmissionPolicy recorded for a write (its binding's `Audit` action, or the
 * policy's `auditAnnotations`), as the API server adds them to the request's audit event.
 *
 * @since 0.2.0
 * @category models
 */
export interface AuditAnnotation {
  /** `validation.policy.admission.k8s.io/validation_failure`, or `<policy>/<key>` for the policy's own. */
  readonly key: string
  /** For a validation failure, the JSON list the API server writes (message, policy, binding, ...). */
  readonly value: string
  readonly policy: string
  readonly binding: string
  readonly operation: "CREATE" | "UPDATE"
  readonly apiVersion: string
  readonly resource: string
  readonly namespace: string | undefined
  readonly name: string | undefined
}

/**
 * Chooses the requests a fault applies to.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestMatch = (method: string, path: string, query: Readonly<Record<string, string>>) => boolean

/**
 * Which requests a fault applies to, and how many: `count` (default 1, `Infinity` until
 * `clearFaults()`), and requests with one of `method`, a path that starts with `path` (or
 * that a RegExp `path` tests) and that `match` accepts, each when given.
 */
export interface FaultMatching {
  readonly count?: number | undefined
  readonly method?: string | ReadonlyArray<string> | undefined
  readonly path?: string | RegExp | undefined
  readonly match?: RequestMatch | undefined
}

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
   * Every access the fake authorized or refused (after `reset`), oldest first, as the API
   * server's authorizer saw it: what `Rbac.required` turns into a least-privilege Role.
   */
  readonly accessLog: () => ReadonlyArray<AccessRecord>
  /**
   * How many non-GET requests reached a resource (failed ones included; those answered by
   * `failNext`/`stallNext`, a 401, or an unknown path, and `processedtemplates`, excluded).
   */
  readonly mutations: () => number
  /** The audit annotations ValidatingAdmissionPolicies recorded (after `reset`), oldest first. */
  readonly auditAnnotations: () => ReadonlyArray<AuditAnnotation>
  /** Clears the request log, the mutation count, the audit annotations and pending faults. The store is kept. */
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
  /**
   * The next `count` (default 1; `Infinity`: every one until `clearFaults()`) matching
   * requests answer this status (400 to 599) with the API server's Status body. A request
   * matches when it has one of `method` (`"GET"`, `["PUT", "PATCH"]`), its path starts
   * with `path` (or a RegExp `path` tests it), and `match` says yes, each when given.
   * The client sends a read that got a 5xx (and any request that got a 429, or a 503
   * with `retryAfterSeconds`) again after a backoff on the Effect Clock: under `it.effect`
   * (a TestClock) that retry waits for `TestClock.adjust`, and the fake says so once
   * (a `console.warn`) when it answers such a failure.
   */
  readonly failNext: (options: FaultMatching & {
    readonly status: number
    /** Sent as `Retry-After` and `details.retryAfterSeconds`. */
    readonly retryAfterSeconds?: number | undefined
    readonly message?: string | undefined
    readonly reason?: string | undefined
  }) => void
  /**
   * The next `count` matching requests are carried out, then their connection is reset:
   * before any answer when `afterBytes` is undefined, else after that many body bytes
   * (layer: the response body fails; serve: the socket is destroyed).
   */
  readonly resetNext: (options?: FaultMatching & {
    readonly afterBytes?: number | undefined
  }) => void
  /** The next `count` matching requests are carried out, then answered `ms` later. */
  readonly delayNext: (options: FaultMatching & {
    readonly ms: number
  }) => void
  /** The next `count` matching requests are never answered (nor carried out) until the client gives up. */
  readonly stallNext: (options?: FaultMatching) => void
  /**
   * The next `count` matching requests are carried out and answered with a
   * `Warning: 299 - "<text>"` header, as the API server warns of a deprecated API
   * version or an unknown field.
   */
  readonly warnNext: (options: FaultMatching & {
    readonly text: string
  }) => void
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
 * @since 0.1.0
 * @category models
 */
export interface ListenOptions {
  /**
   * HTTPS: the server's PEM certificate and key, `ca` (their issuer) going into the kubeconfig; or
   * `"self-signed"`, a CA and a server certificate made for this server (valid for localhost,
   * 127.0.0.1, ::1 and `host`), the CA in the kubeconfig, as a real cluster's. Plain HTTP without.
   */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca?: string | undefined } | "self-signed" | undefined
  /** 0 (default) picks a free port. */
  readonly port?: number | undefined
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Where to write the kubeconfig; a new temporary directory by default. */
  readonly kubeconfigDir?: string | undefined
  /**
   * Gzip answers over 128 KiB for requests that accept gzip, as kube-apiserver does
   * (default true). As there, watch streams and followed logs are never compressed.
   */
  readonly compression?: boolean | undefined
  /**
   * With `tls`: offer HTTP/2 by ALPN beside HTTP/1.1, as kube-apiserver does (default true).
   * HTTP/1.1 stays for clients that ask for it and for exec, attach and port-forward
   * (WebSocket upgrades). Without `tls` the server speaks HTTP/1.1 only.
   */
  readonly http2?: boolean | undefined
  /** The `SETTINGS_MAX_CONCURRENT_STREAMS` an HTTP/2 connection announces (default 1000; kube-apiserver 1.35 announces 100 unless `--http2-max-streams-per-connection` is set). */
  readonly maxConcurrentStreams?: number | undefined
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
  /** Connections accepted since the server started (after the TLS handshake, with TLS). */
  readonly connectionsOpened: () => number
  /** Connections currently open that speak HTTP/2 (negotiated by ALPN). */
  readonly http2Connections: () => number
  /**
   * Cuts every open connection (closed at once, as a load balancer or a dead node would): every
   * request and stream on them fails at once. `filter` picks some; how many were cut.
   */
  readonly resetConnections: (filter?: (index: number) => boolean) => number
  /**
   * Sends GOAWAY on every HTTP/2 connection, as kube-apiserver does when it shuts down or
   * rebalances: streams already open finish, new requests go elsewhere. How many were told.
   */
  readonly goAway: () => number
  /** How many answers were sent gzipped (`Content-Encoding: gzip`; see `ListenOptions.compression`). */
  readonly gzippedAnswers: () => number
  /** Closes the server, destroys open sockets and removes the kubeconfig. */
  readonly close: () => Promise<void>
}

/**
 * The request a `proxy` handler answers: the target object, where on it, and the request.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProxyRequest {
  readonly resource: "pods" | "services" | "nodes"
  readonly object: FakeObject
  readonly scheme: string | undefined
  readonly port: string | undefined
  readonly method: string
  /** The path on the target, from `/`. */
  readonly path: string
  /** The query string, without `?` (empty when there is none). */
  readonly query: string
  readonly header: (name: string) => string | undefined
  readonly body: string
}

/**
 * What the target answers (default 200, `text/plain`, empty).
 *
 * @since 0.2.0
 * @category models
 */
export interface ProxyAnswer {
  readonly status?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | undefined
}
