/**
 * RBAC cases answered the same by kube-apiserver's authorizer and the fake's: one
 * namespace's Roles, ClusterRoles (one aggregated), bindings to a user, a group, a service
 * account and a missing role, then requests as those subjects (impersonated through the
 * admin's client, so the same code runs on both): lists, named gets, watches, creates,
 * server-side apply that creates, cluster-scoped and non-resource reads, role and binding
 * writes that escalate or bind, access and rules reviews. Each case's answer is its HTTP
 * code, Status reason, message and details, or the review's status, for the e2e test to
 * compare and the fake's test to pin.
 */
import { Effect, Schedule, Stream } from "effect"
import {
  ApiError,
  ClusterRoleBindings,
  ClusterRoles,
  ConfigMaps,
  Kube,
  KubeConfig,
  Nodes,
  Namespaces,
  Pods,
  RoleBindings,
  Roles,
  Secrets
} from "effect-kube"

const rbac = "rbac.authorization.k8s.io"

/** A case's answer, comparable across servers. */
export type Answer =
  | { readonly ok: true; readonly found?: boolean }
  | { readonly code: number; readonly reason: string; readonly message: string; readonly details?: unknown }
  | { readonly review: unknown }

const answer = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Answer, never, R> =>
  effect.pipe(
    Effect.map((): Answer => ({ ok: true })),
    Effect.catch((e: unknown) =>
      Effect.succeed<Answer>(
        ApiError.is(e)
          ? { code: e.code, reason: e.reason, message: e.statusMessage, details: e.status?.details }
          : { code: -1, reason: "not an ApiError", message: String(e) }
      )
    )
  )

/** As a subject: the admin's client with `Impersonate-*` headers. */
const as = (user: string, groups: ReadonlyArray<string> = []) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(KubeConfig.KubeConfig, (base) =>
    Effect.provideService(effect, KubeConfig.KubeConfig, {
      ...base,
      impersonate: { user, uid: undefined, groups, extra: {} }
    }))

const review = (kind: string, spec: unknown, namespace?: string) =>
  Kube.request({
    method: "POST",
    path: namespace === undefined
      ? `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`
      : `/apis/authorization.k8s.io/v1/namespaces/${namespace}/${kind.toLowerCase()}s`,
    body: { apiVersion: "authorization.k8s.io/v1", kind, spec }
  }).pipe(Effect.map((r) => (r as { status: unknown }).status))

const rulesKey = (status: unknown) => {
  const s = status as { resourceRules: Array<unknown>; nonResourceRules: Array<unknown>; incomplete: boolean }
  return {
    resourceRules: s.resourceRules.map((r) => JSON.stringify(r)).sort(),
    nonResourceRules: s.nonResourceRules.map((r) => JSON.stringify(r)).sort(),
    incomplete: s.incomplete
  }
}

/** Sets up the namespace's RBAC as the admin. */
export const setup = (ns: string) =>
  Effect.gen(function*() {
    const roles = Kube.api(Roles, { namespace: ns })
    const bindings = Kube.api(RoleBindings, { namespace: ns })
    yield* roles.create({
      metadata: { name: "reader" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get"], resourceNames: ["web"] },
        { apiGroups: [rbac], resources: ["roles", "rolebindings"], verbs: ["create"] }
      ]
    })
    yield* bindings.create({
      metadata: { name: "reader" },
      roleRef: { apiGroup: rbac, kind: "Role", name: "reader" },
      subjects: [
        { apiGroup: rbac, kind: "User", name: "alice" },
        { kind: "ServiceAccount", name: "app" }
      ]
    })
    yield* bindings.create({
      metadata: { name: "dangling" },
      roleRef: { apiGroup: rbac, kind: "Role", name: "missing" },
      subjects: [{ apiGroup: rbac, kind: "User", name: "bob" }]
    })
    yield* Kube.api(ClusterRoles).create({
      metadata: { name: `${ns}-ns-viewer` },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] }]
    })
    yield* Kube.api(ClusterRoleBindings).create({
      metadata: { name: `${ns}-ns-viewer` },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: `${ns}-ns-viewer` },
      subjects: [{ apiGroup: rbac, kind: "Group", name: `${ns}-team` }]
    })
    yield* Kube.api(ClusterRoles).create({
      metadata: { name: `${ns}-aggregated` },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${ns}.example.com/aggregate`]: "true" } }] },
      rules: []
    })
    yield* Kube.api(ClusterRoles).create({
      metadata: { name: `${ns}-secrets`, labels: { [`${ns}.example.com/aggregate`]: "true" } },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }]
    })
    yield* bindings.create({
      metadata: { name: "viewer" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: "view" },
      subjects: [{ apiGroup: rbac, kind: "User", name: "erin" }]
    })
    yield* bindings.create({
      metadata: { name: "aggregated" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: `${ns}-aggregated` },
      subjects: [{ apiGroup: rbac, kind: "User", name: "alice" }]
    })
  })

/** Removes the cluster-scoped objects of `setup` (the namespace takes the rest). */
export const teardown = (ns: string) =>
  Effect.all([
    Effect.ignore(Kube.api(ClusterRoles).delete(`${ns}-ns-viewer`)),
    Effect.ignore(Kube.api(ClusterRoles).delete(`${ns}-aggregated`)),
    Effect.ignore(Kube.api(ClusterRoles).delete(`${ns}-secrets`)),
    Effect.ignore(Kube.api(ClusterRoleBindings).delete(`${ns}-ns-viewer`))
  ])

const allowed = (user: string, groups: ReadonlyArray<string>, attributes: Record<string, string>) =>
  review("SubjectAccessReview", { user, groups, resourceAttributes: attributes }).pipe(
    Effect.map((s) => (s as { allowed: boolean }).allowed)
  )

/**
 * Waits until the authorizer sees the setup (a real server's RBAC reads informer caches,
 * and aggregation is a controller's work).
 */
export const settled = (ns: string) =>
  Effect.all([
    allowed("alice", [], { namespace: ns, verb: "list", resource: "secrets" }),
    allowed("x", [`${ns}-team`], { verb: "list", resource: "namespaces" }),
    allowed("alice", [], { namespace: ns, verb: "get", resource: "configmaps" })
  ]).pipe(
    Effect.flatMap((all) => (all.every((a) => a) ? Effect.void : Effect.fail("pending" as const))),
    Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 50 })
  )

/** The cases, in order, each answered. */
export const cases = (ns: string) => {
  const alice = as("alice")
  const configMaps = Kube.api(ConfigMaps, { namespace: ns })
  const list: Array<readonly [string, Effect.Effect<Answer, never, Kube.Requirements>]> = [
    ["alice lists configmaps", answer(alice(configMaps.list()))],
    ["alice creates a configmap", answer(alice(configMaps.create({ metadata: { name: "made" } })))],
    ["alice applies (creates) a configmap", answer(alice(configMaps.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied" }, data: { a: "b" } }, { fieldManager: "rbac-test" })))],
    ["alice gets the pod she may (absent)", answer(alice(Kube.api(Pods, { namespace: ns }).getOrFail("web")))],
    ["alice gets another pod", answer(alice(Kube.api(Pods, { namespace: ns }).get("other")))],
    ["alice lists pods", answer(alice(Kube.api(Pods, { namespace: ns }).list()))],
    ["alice lists secrets (aggregated)", answer(alice(Kube.api(Secrets, { namespace: ns }).list()))],
    ["alice watches configmaps in default", answer(alice(Stream.runDrain(Kube.api(ConfigMaps, { namespace: "default" }).watch({ timeoutSeconds: 1 }))))],
    ["alice lists nodes", answer(alice(Kube.api(Nodes).list()))],
    ["alice reads /metrics", answer(alice(Kube.request({ method: "GET", path: "/metrics" })))],
    ["a team member lists namespaces", answer(as("carol", [`${ns}-team`])(Kube.api(Namespaces).list()))],
    ["alice gets her namespace", answer(alice(Kube.api(Namespaces).get(ns)))],
    ["erin lists pods (bound to view)", answer(as("erin")(Kube.api(Pods, { namespace: ns }).list()))],
    ["erin lists secrets (view does not hold them)", answer(as("erin")(Kube.api(Secrets, { namespace: ns }).list()))],
    ...["admin", "edit", "view"].map((name) =>
      [
        `the rules of the default ClusterRole ${name}`,
        Kube.api(ClusterRoles).getOrFail(name).pipe(
          Effect.map((role): Answer => ({ review: role.rules })),
          Effect.orDie
        )
      ] as const
    ),
    ["bob lists configmaps (his role is missing)", answer(as("bob")(configMaps.list()))],
    ["the service account lists configmaps", answer(as(`system:serviceaccount:${ns}:app`)(configMaps.list()))],
    ["alice creates a role she holds", answer(alice(Kube.api(Roles, { namespace: ns }).create({ metadata: { name: "held" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] })))],
    ["alice creates a role that escalates", answer(alice(Kube.api(Roles, { namespace: ns }).create({
      metadata: { name: "escalates" },
      rules: [
        { apiGroups: ["apps"], resources: ["deployments", "deployments/scale"], verbs: ["get", "list"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "delete"], resourceNames: ["x"] }
      ]
    })))],
    ["alice binds a cluster role she holds", answer(alice(Kube.api(RoleBindings, { namespace: ns }).create({
      metadata: { name: "secrets-to-dave" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: `${ns}-secrets` },
      subjects: [{ apiGroup: rbac, kind: "User", name: "dave" }]
    })))],
    ["alice binds cluster-admin", answer(alice(Kube.api(RoleBindings, { namespace: ns }).create({
      metadata: { name: "admin-to-dave" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: rbac, kind: "User", name: "dave" }]
    })))],
    ["alice binds a missing role", answer(alice(Kube.api(RoleBindings, { namespace: ns }).create({
      metadata: { name: "to-nothing" },
      roleRef: { apiGroup: rbac, kind: "Role", name: "nothing" },
      subjects: [{ apiGroup: rbac, kind: "User", name: "dave" }]
    })))],
    ...[
      ["get", "configmaps", ""],
      ["delete", "configmaps", ""],
      ["get", "pods", "web"],
      ["get", "pods", "other"],
      ["list", "secrets", ""]
    ].map(([verb, resource, name]) =>
      [
        `alice asks whether she may ${verb} ${resource} ${name}`,
        alice(review("SelfSubjectAccessReview", { resourceAttributes: { namespace: ns, verb, resource, name } })).pipe(
          Effect.map((r): Answer => ({ review: r })),
          Effect.orDie
        )
      ] as const
    ),
    ["alice asks whether she may get /api", alice(review("SelfSubjectAccessReview", { nonResourceAttributes: { verb: "get", path: "/api" } })).pipe(Effect.map((r): Answer => ({ review: r })), Effect.orDie)],
    ["the service account asks a local access review", review("LocalSubjectAccessReview", { user: `system:serviceaccount:${ns}:app`, resourceAttributes: { namespace: ns, verb: "watch", resource: "configmaps" } }, ns).pipe(Effect.map((r): Answer => ({ review: r })), Effect.orDie)],
    ["bob asks a subject access review", review("SubjectAccessReview", { user: "bob", resourceAttributes: { namespace: ns, verb: "get", resource: "configmaps" } }).pipe(Effect.map((r): Answer => ({ review: r })), Effect.orDie)],
    ["alice's rules in the namespace", alice(Kube.request({ method: "POST", path: "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace: ns } } })).pipe(Effect.map((r): Answer => ({ review: rulesKey((r as { status: unknown }).status) })), Effect.orDie)]
  ]
  return list
}

/** Every case answered in order, as `[label, answer]`. */
export const answers = (ns: string) =>
  Effect.forEach(cases(ns), ([label, run]) => Effect.map(run, (a) => [label, a] as const))
