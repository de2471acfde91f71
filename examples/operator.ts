/**
 * A small but real operator: `ConfigMirror` (mirror.example.com/v1, cluster-scoped)
 * keeps copies of a ConfigMap in a list of namespaces. Its CRD is derived from its Schema
 * (`CustomResource.make`: a status subresource, printer columns, a CEL rule the API server
 * enforces). It owns the copies (ownerReferences), reports conditions in its status, cleans
 * up through a finalizer, records events, and runs under leader election so that N
 * replicas can be deployed.
 *
 *   npm run example:operator                                  # on the embedded fake cluster: a scripted tour
 *   npx tsx examples/operator.ts --kubeconfig ~/.kube/config  # on a real cluster: installs the CRD, runs until Ctrl-C
 *
 * The tour runs the operator as its service account (impersonated) and ends by printing the
 * least-privilege RBAC it used (`Rbac.required`): the Role to deploy it with.
 *
 * On a real cluster, try:
 *   kubectl create configmap settings --from-literal=color=blue
 *   kubectl apply -f - <<< '{"apiVersion":"mirror.example.com/v1","kind":"ConfigMirror","metadata":{"name":"settings"},
 *     "spec":{"source":{"namespace":"default","name":"settings"},"targetNamespaces":["kube-public"]}}'
 */
import * as os from "node:os"
import { pathToFileURL } from "node:url"
import * as NodeRuntime from "@effect/platform-node-shared/NodeRuntime"
import { Cause, Console, Duration, Effect, Fiber, Layer, Option, Schedule, Schema } from "effect"
import {
  ApiError,
  ConfigMaps,
  Controller,
  type ConfigMapApply,
  CustomResource,
  CustomResourceDefinitions,
  Informers,
  Kube,
  KubeConfig,
  LeaderElection,
  NodeKube,
  type Resource
} from "effect-kube"
import { FakeCluster, Rbac } from "@effect-kube/testing"

// ---- the custom resource ---------------------------------------------------------------

const Condition = Schema.Struct({
  type: Schema.String,
  status: Schema.Literals(["True", "False", "Unknown"]),
  reason: Schema.String,
  message: Schema.String,
  lastTransitionTime: Schema.String,
  observedGeneration: Schema.optional(Schema.Number.check(Schema.isInt()))
})

const ConfigMirrorSpec = Schema.Struct({
  source: Schema.Struct({
    namespace: Schema.String.annotate({ description: "The namespace of the ConfigMap to copy." }),
    name: Schema.String.annotate({ description: "The name of the ConfigMap to copy." })
  }),
  targetNamespaces: Schema.Array(Schema.String).check(Schema.isMinLength(1)).annotate({
    description: "The namespaces the copies go to.",
    "x-kubernetes-list-type": "set"
  })
}).annotate({
  // checked by the API server (and FakeCluster) before the object is stored; `namespace` is a reserved
  // word of CEL, so rules name the field `__namespace__`
  "x-kubernetes-validations": [{
    rule: "!(self.source.__namespace__ in self.targetNamespaces)",
    message: "a ConfigMap cannot be mirrored into its own namespace"
  }]
})

const ConfigMirrorStatus = Schema.Struct({
  copies: Schema.optional(Schema.Array(Schema.String)),
  conditions: Schema.optional(
    Schema.Array(Condition).annotate({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
  )
})

/**
 * The kind and its CRD in one: `ConfigMirrors.crd()` is the CustomResourceDefinition (its schema derived from
 * the Schemas above, a status subresource, printer columns), `Kube.api(ConfigMirrors)` the typed client.
 */
export const ConfigMirrors = CustomResource.make({
  group: "mirror.example.com",
  version: "v1",
  kind: "ConfigMirror",
  scope: "Cluster",
  spec: ConfigMirrorSpec,
  status: ConfigMirrorStatus,
  shortNames: ["cmir"],
  printerColumns: [
    { name: "Source", type: "string", jsonPath: ".spec.source.name" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
  ]
})
type ConfigMirror = Resource.Object<typeof ConfigMirrors>

const mirrors = Kube.api(ConfigMirrors)
const controllerName = "mirror.example.com/config-mirror"
const fieldManager = "config-mirror"
const mirrorLabel = "mirror.example.com/mirror"
const finalizer = "mirror.example.com/cleanup"

// ---- reconcile -------------------------------------------------------------------------

/** Writes the status, through the status subresource (writes to the object itself keep it as it is). */
const writeStatus = (mirror: ConfigMirror, status: NonNullable<ConfigMirror["status"]>) =>
  mirrors.patchStatus(mirror.metadata!.name!, { _tag: "Merge", body: { status } })

const readyCondition = (mirror: ConfigMirror, ok: boolean, reason: string, message: string) => {
  const previous = mirror.status?.conditions?.find((c) => c.type === "Ready")
  const status = ok ? "True" as const : "False" as const
  return {
    type: "Ready",
    status,
    reason,
    message,
    lastTransitionTime: previous?.status === status ? previous.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    observedGeneration: mirror.metadata?.generation
  }
}

const copiesOf = (mirror: ConfigMirror) =>
  Kube.api(ConfigMaps).list({ labelSelector: `${mirrorLabel}=${mirror.metadata!.name!}`, allNamespaces: true })

const reconcile = (remember: (mirror: ConfigMirror) => void) => (mirror: ConfigMirror, ctx: Controller.Context<ConfigMirror>) =>
  Effect.gen(function*() {
    remember(mirror)
    const name = mirror.metadata!.name!
    const source = yield* Kube.api(ConfigMaps, { namespace: mirror.spec.source.namespace }).get(mirror.spec.source.name)
    if (Option.isNone(source)) {
      yield* writeStatus(mirror, {
        copies: [],
        conditions: [readyCondition(mirror, false, "SourceNotFound", `ConfigMap ${mirror.spec.source.namespace}/${mirror.spec.source.name} does not exist`)]
      })
      yield* ctx.recorder.warning("SourceNotFound", `ConfigMap ${mirror.spec.source.namespace}/${mirror.spec.source.name} does not exist`)
      return Controller.requeueAfter("30 seconds")
    }
    const targets = [...new Set(mirror.spec.targetNamespaces)].sort()
    for (const namespace of targets) {
      const copy: ConfigMapApply = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: mirror.spec.source.name,
          namespace,
          labels: { [mirrorLabel]: name },
          ownerReferences: [{
            apiVersion: ConfigMirrors.apiVersion,
            kind: ConfigMirrors.kind,
            name,
            uid: mirror.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true
          }]
        },
        data: source.value.data ?? {}
      }
      yield* Kube.api(ConfigMaps, { namespace }).apply(copy, { fieldManager, force: true })
    }
    // copies in namespaces no longer listed
    for (const stale of (yield* copiesOf(mirror)).items) {
      if (!targets.includes(stale.metadata!.namespace!)) {
        yield* Kube.api(ConfigMaps, { namespace: stale.metadata!.namespace! }).delete(stale.metadata!.name!)
      }
    }
    const message = `copied to ${targets.length} namespace(s)`
    yield* writeStatus(mirror, { copies: targets, conditions: [readyCondition(mirror, true, "Synced", message)] })
    yield* ctx.recorder.normal("Synced", message)
    return Controller.done
  })

const cleanup = (mirror: ConfigMirror, ctx: Controller.Context<ConfigMirror>) =>
  Effect.gen(function*() {
    const copies = (yield* copiesOf(mirror)).items
    for (const copy of copies) {
      yield* Kube.api(ConfigMaps, { namespace: copy.metadata!.namespace! }).delete(copy.metadata!.name!)
    }
    yield* ctx.recorder.normal("CleanedUp", `removed ${copies.length} copies`, "Cleanup")
  })

/** The controller, with its own index of sources (each instance, e.g. each replica in a test, has one). */
const makeController = () => {
  /** Source ConfigMap (namespace/name) -> the mirrors that copy it, so that a change to it triggers them. */
  const bySource = new Map<string, Set<string>>()
  const remember = (mirror: ConfigMirror) => {
    const source = `${mirror.spec.source.namespace}/${mirror.spec.source.name}`
    for (const names of bySource.values()) names.delete(mirror.metadata!.name!)
    bySource.set(source, (bySource.get(source) ?? new Set()).add(mirror.metadata!.name!))
  }
  return Controller.make({
    name: controllerName,
    api: mirrors,
    reconcile: reconcile(remember),
    finalizer: { name: finalizer, cleanup },
    owns: [{ api: Kube.api(ConfigMaps), allNamespaces: true, labelSelector: mirrorLabel }],
    watches: [
      Controller.watch(
        Kube.api(ConfigMaps),
        (cm) => [...(bySource.get(`${cm.metadata?.namespace}/${cm.metadata?.name}`) ?? [])].map((name) => ({ name })),
        { allNamespaces: true }
      )
    ],
    concurrency: 2
  })
}

/** The operator: the controller, only while this replica holds the lease. */
export const operator = (namespace: string | undefined, identity = `${os.hostname()}-${process.pid}`) =>
  LeaderElection.run(Controller.run(makeController()), {
    lease: { name: "config-mirror", namespace },
    identity
  }).pipe(Effect.provide(Informers.layer))

/** The operator as a Layer (one replica, running while the layer is up), for tests that run several. */
export const layer = (options: { readonly namespace?: string | undefined; readonly identity?: string | undefined } = {}) =>
  Layer.effectDiscard(Effect.forkScoped(operator(options.namespace, options.identity)))

// ---- on the embedded fake cluster: a scripted tour ---------------------------------------

const waitUntil = <A, E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      if (yield* check) return yield* Console.log(`  ✓ ${what}`)
      yield* Effect.sleep("25 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting until ${what}`))
  })

const copyIn = (namespace: string) =>
  Effect.map(Kube.api(ConfigMaps, { namespace }).get("settings"), (o) => Option.map(o, (cm) => cm.data?.color ?? ""))

/** Installs the CRD derived from the Schemas, and waits until the kind is served. */
const installCrd = Effect.gen(function*() {
  yield* Kube.api(CustomResourceDefinitions).apply(yield* ConfigMirrors.crd(), { fieldManager, force: true })
  yield* Effect.retry(mirrors.list({ limit: 1 }), {
    while: (e) => ApiError.isNotFound(e),
    schedule: Schedule.max([Schedule.spaced(Duration.seconds(1)), Schedule.recurs(30)])
  })
})

const operatorUser = "system:serviceaccount:default:config-mirror"

const tour = Effect.gen(function*() {
  const cluster = yield* FakeCluster.FakeCluster
  yield* installCrd
  yield* Console.log("CRD configmirrors.mirror.example.com installed, derived from the ConfigMirror Schemas")
  yield* Kube.api(ConfigMaps, { namespace: "default" }).create({ metadata: { name: "settings" }, data: { color: "blue" } })
  // the operator runs as its service account, so that its accesses are told apart from the tour's
  const base = yield* KubeConfig.KubeConfig
  const running = yield* Effect.forkChild(operator("default").pipe(
    Effect.provideService(KubeConfig.KubeConfig, {
      ...base,
      impersonate: { user: operatorUser, uid: undefined, groups: [], extra: {} }
    })
  ))
  yield* Console.log("ConfigMirror 'settings' copies default/settings into team-a and team-b")
  yield* mirrors.create({
    metadata: { name: "settings" },
    spec: { source: { namespace: "default", name: "settings" }, targetNamespaces: ["team-a", "team-b"] }
  })
  yield* waitUntil("copies in team-a and team-b", Effect.map(Effect.all([copyIn("team-a"), copyIn("team-b")]), (c) => c.every((o) => Option.getOrElse(o, () => "") === "blue")))
  yield* waitUntil("status Ready=True", Effect.map(mirrors.get("settings"), (m) => Option.exists(m, (m) => m.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false)))

  yield* Console.log("a mirror into its source's own namespace is refused by the CRD's CEL rule")
  const refused = yield* Effect.flip(mirrors.create({
    metadata: { name: "loop" },
    spec: { source: { namespace: "default", name: "settings" }, targetNamespaces: ["default"] }
  }))
  yield* Console.log(`  ✓ ${refused._tag === "ApiError" ? refused.statusMessage : refused.message}`)

  yield* Console.log("the source changes: the copies follow")
  yield* Kube.api(ConfigMaps, { namespace: "default" }).patch("settings", { _tag: "Merge", body: { data: { color: "green" } } })
  yield* waitUntil("copies are green", Effect.map(Effect.all([copyIn("team-a"), copyIn("team-b")]), (c) => c.every((o) => Option.getOrElse(o, () => "") === "green")))

  yield* Console.log("someone deletes a copy: it comes back (the controller owns it)")
  yield* Kube.api(ConfigMaps, { namespace: "team-a" }).delete("settings")
  yield* waitUntil("team-a's copy is back", Effect.map(copyIn("team-a"), Option.isSome))

  yield* Console.log("targets become team-b and team-c: team-a's copy goes, team-c's comes")
  yield* mirrors.patch("settings", { _tag: "Merge", body: { spec: { targetNamespaces: ["team-b", "team-c"] } } })
  yield* waitUntil("copies in team-b and team-c only", Effect.map(Effect.all([copyIn("team-a"), copyIn("team-c")]), ([a, c]) => Option.isNone(a) && Option.isSome(c)))

  yield* Console.log("the mirror is deleted: the finalizer cleans up, then lets it go")
  yield* mirrors.delete("settings")
  yield* waitUntil("the mirror and its copies are gone", Effect.map(Effect.all([mirrors.get("settings"), copyIn("team-b"), copyIn("team-c")]), ([m, b, c]) => Option.isNone(m) && Option.isNone(b) && Option.isNone(c)))

  const lease = cluster.get({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "config-mirror", namespace: "default" })
  yield* Console.log(`lease held by ${(lease?.spec as { holderIdentity?: string }).holderIdentity}, renewed at ${(lease?.spec as { renewTime?: string }).renewTime}`)
  const events = cluster.list("events.k8s.io/v1", "events", "default")
  yield* Console.log(`events recorded (${events.length}):`)
  for (const e of events) {
    const ev = e as { type?: string; reason?: string; note?: string; series?: { count: number } }
    yield* Console.log(`  ${ev.type} ${ev.reason}: ${ev.note}${ev.series ? ` (x${ev.series.count})` : ""}`)
  }
  yield* Fiber.interrupt(running)
  const rbac = yield* Rbac.required({
    name: "config-mirror",
    subject: { kind: "ServiceAccount", namespace: "default", name: "config-mirror" },
    user: operatorUser,
    // it acts on any mirror and ConfigMap; only its Lease has a name of its own
    resourceNames: ["leases"]
  })
  yield* Console.log(`the RBAC the operator used (Rbac.required), to deploy it with:\n${Rbac.toYaml(rbac)}`)
  yield* Console.log("done")
}).pipe(Effect.provide(FakeCluster.layer({ namespaces: ["team-a", "team-b", "team-c"] })))

// ---- on a real cluster -------------------------------------------------------------------

const onRealCluster = (path: string) =>
  Effect.gen(function*() {
    yield* installCrd
    yield* Console.log("CRD configmirrors.mirror.example.com applied and served")
    yield* Console.log("running (Ctrl-C to stop); create ConfigMirror objects to see it work")
    return yield* operator(undefined)
  }).pipe(Effect.provide(NodeKube.layerFromFile({ path })))

// run as a script (not when a test imports ConfigMirrors and operator)
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf("--kubeconfig")
  const program: Effect.Effect<unknown, unknown> = at !== -1 && process.argv[at + 1] !== undefined
    ? onRealCluster(process.argv[at + 1]!)
    : tour
  // runMain interrupts the program on Ctrl-C / SIGTERM, so the lease is released for a successor
  NodeRuntime.runMain(program.pipe(
    Effect.tapCause((cause) => Console.error("operator failed", Cause.pretty(cause)))
  ), { disableErrorReporting: true })
}
