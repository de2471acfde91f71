/**
 * `Rbac`: the least-privilege RBAC a program needs, written from what it asked a
 * `FakeCluster` for. The fake logs every access as kube-apiserver's authorizer sees it
 * (verb, API group, resource, subresource, namespace, name; `Control.accessLog`);
 * `required` turns a log into the Role and RoleBinding per namespace (and a ClusterRole
 * and ClusterRoleBinding for what was cluster-wide) that allow exactly those accesses,
 * and `toYaml` writes them as a user commits them.
 *
 * - A resource goes into a namespace's Role when every use of it was in a namespace;
 *   one listed across namespaces, or a cluster-scoped one, goes into the ClusterRole.
 * - A verb is restricted to `resourceNames` when every use of it named an object (a list
 *   or watch names one through a `metadata.name=` field selector, as the API server reads
 *   it); a create or a plain list cannot be.
 * - What every authenticated user already holds (discovery, the self reviews) is left
 *   out.
 *
 * Run the program on a fake with `authorization: "RBAC"` and the written objects seeded
 * to check them: a denial is the 403 a cluster would answer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ConfigMaps, Kube } from "effect-kube"
 * import { FakeCluster, Rbac } from "@effect-kube/testing"
 *
 * const program = Effect.gen(function* () {
 *   const configMaps = Kube.api(ConfigMaps, { namespace: "shop" })
 *   yield* configMaps.create({ metadata: { name: "settings" }, data: { mode: "fast" } })
 *   yield* configMaps.get("settings")
 * })
 *
 * const yaml = Effect.gen(function* () {
 *   yield* program
 *   const objects = yield* Rbac.required({ name: "shop-app", subject: { kind: "ServiceAccount", namespace: "shop", name: "app" } })
 *   return Rbac.toYaml(objects)
 * }).pipe(Effect.provide(FakeCluster.layer({ namespaces: ["shop"] })))
 *
 * Effect.runPromise(yaml).then((text) => {
 *   assert.ok(text.includes("kind: Role"))
 *   assert.ok(text.includes("- create"))
 * })
 * ```
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import { stringify } from "yaml"
import { ruleAllows } from "./internal/authz/rbac.js"
import { bootstrapPolicy } from "./internal/authz/index.js"
import type { Attributes } from "./internal/authz/attributes.js"
import { FakeCluster } from "./FakeCluster.js"
import type { AccessRecord } from "./internal/types.js"

/**
 * Who the written bindings grant the rules to.
 *
 * @since 0.2.0
 * @category models
 */
export type Subject =
  | { readonly kind: "ServiceAccount"; readonly namespace: string; readonly name: string }
  | { readonly kind: "User"; readonly name: string }
  | { readonly kind: "Group"; readonly name: string }

/**
 * A rule of a Role or ClusterRole, as the API writes it.
 *
 * @since 0.2.0
 * @category models
 */
export interface PolicyRule {
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
  readonly nonResourceURLs?: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
}

/**
 * A Role, ClusterRole, RoleBinding or ClusterRoleBinding that `required` writes.
 *
 * @since 0.2.0
 * @category models
 */
export interface RbacObject {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
  readonly metadata: { readonly name: string; readonly namespace?: string }
  readonly rules?: ReadonlyArray<PolicyRule>
  readonly roleRef?: { readonly apiGroup: "rbac.authorization.k8s.io"; readonly kind: "Role" | "ClusterRole"; readonly name: string }
  readonly subjects?: ReadonlyArray<Record<string, string>>
}

/**
 * What to write: the name of every object, the subject the bindings grant to, and
 * optionally which user's accesses count (default: every access logged).
 *
 * @since 0.2.0
 * @category models
 */
export interface RequiredOptions {
  readonly name: string
  readonly subject: Subject
  /** Count only the accesses of this user (as the API server names it: `system:serviceaccount:ns:sa`). */
  readonly user?: string | undefined
  /**
   * Where to restrict verbs to the objects a run named: `true` (default) wherever every use
   * named one; `false` nowhere; a list of resources (`["leases"]`) only those. A controller
   * that acts on whatever objects exist wants its own Lease named, not the test's objects.
   */
  readonly resourceNames?: boolean | ReadonlyArray<string> | undefined
}

const everyone = bootstrapPolicy.filter((o) => o.kind === "ClusterRole" && o.metadata !== undefined &&
  ["system:discovery", "system:basic-user", "system:public-info-viewer"].includes(
    String((o.metadata as Record<string, unknown>).name)
  )
).flatMap((o) => o.rules as ReadonlyArray<PolicyRule>)

/** Whether every authenticated user holds an access already (the bootstrap policy). */
const heldByEveryone = (access: Attributes): boolean => everyone.some((rule) => ruleAllows(access, rule))

const rbacApiVersion = "rbac.authorization.k8s.io/v1" as const

type Restriction = { readonly all: true } | { readonly all: false; readonly names: Set<string> }

/** The rules covering a scope's accesses: per resource and verb, the names when every use named one. */
const rulesOf = (
  accesses: ReadonlyArray<AccessRecord & { readonly resourceRequest: true }>,
  restrict: (resource: string) => boolean
): Array<PolicyRule> => {
  const byResource = new Map<string, Map<string, Restriction>>()
  for (const a of accesses) {
    const key = JSON.stringify([a.apiGroup, a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`])
    const verbs = byResource.get(key) ?? new Map<string, Restriction>()
    byResource.set(key, verbs)
    const current = verbs.get(a.verb)
    if (a.name === "" || !restrict(a.resource)) verbs.set(a.verb, { all: true })
    else if (current === undefined) verbs.set(a.verb, { all: false, names: new Set([a.name]) })
    else if (!current.all) current.names.add(a.name)
  }
  // one rule per resource and restriction, then resources with the same group, verbs and names merged
  const merged = new Map<string, { apiGroup: string; resources: Array<string>; verbs: Array<string>; names: Array<string> }>()
  for (const [key, verbs] of [...byResource].sort(([a], [b]) => a.localeCompare(b))) {
    const [apiGroup, resource] = JSON.parse(key) as [string, string]
    const byRestriction = new Map<string, Array<string>>()
    for (const [verb, restriction] of verbs) {
      const names = restriction.all ? [] : [...restriction.names].sort()
      const r = JSON.stringify(names)
      byRestriction.set(r, [...(byRestriction.get(r) ?? []), verb])
    }
    for (const [r, verbList] of byRestriction) {
      const names = JSON.parse(r) as Array<string>
      const sortedVerbs = verbList.sort()
      const mergeKey = JSON.stringify([apiGroup, sortedVerbs, names])
      const existing = merged.get(mergeKey)
      if (existing !== undefined) existing.resources.push(resource)
      else merged.set(mergeKey, { apiGroup, resources: [resource], verbs: sortedVerbs, names })
    }
  }
  return [...merged.values()].map((m) => ({
    apiGroups: [m.apiGroup],
    resources: m.resources,
    ...(m.names.length > 0 ? { resourceNames: m.names } : {}),
    verbs: m.verbs
  }))
}

const subjectOf = (subject: Subject): Record<string, string> =>
  subject.kind === "ServiceAccount"
    ? { kind: "ServiceAccount", name: subject.name, namespace: subject.namespace }
    : { apiGroup: "rbac.authorization.k8s.io", kind: subject.kind, name: subject.name }

/**
 * The least-privilege Roles, ClusterRole and bindings that allow exactly the accesses of
 * a log (`Control.accessLog()`), ClusterRole and ClusterRoleBinding first (when anything
 * was cluster-wide), then a Role and RoleBinding per namespace, sorted.
 *
 * @example
 * ```ts
 * import { Rbac } from "@effect-kube/testing"
 *
 * const objects = Rbac.fromAccessLog([
 *   { user: "u", groups: [], allowed: true, resourceRequest: true, verb: "get", apiGroup: "apps", apiVersion: "v1", resource: "deployments", subresource: "", namespace: "shop", name: "web" }
 * ], { name: "web-reader", subject: { kind: "User", name: "u" } })
 * assert.deepStrictEqual(objects[0]!.rules, [{ apiGroups: ["apps"], resources: ["deployments"], resourceNames: ["web"], verbs: ["get"] }])
 * ```
 * @since 0.2.0
 * @category constructors
 */
export const fromAccessLog = (log: ReadonlyArray<AccessRecord>, options: RequiredOptions): ReadonlyArray<RbacObject> => {
  const names = options.resourceNames ?? true
  const restrict = (resource: string) => (typeof names === "boolean" ? names : names.includes(resource))
  const counted = log.filter((a) => (options.user === undefined || a.user === options.user) && !heldByEveryone(a))
  const resourceAccesses = counted.filter((a): a is AccessRecord & { readonly resourceRequest: true } => a.resourceRequest)
  const key = (a: { apiGroup: string; resource: string; subresource: string }) => `${a.apiGroup}/${a.resource}/${a.subresource}`
  const clusterWide = new Set(resourceAccesses.filter((a) => a.namespace === "").map(key))
  const cluster = resourceAccesses.filter((a) => clusterWide.has(key(a)))
  const byNamespace = new Map<string, Array<AccessRecord & { readonly resourceRequest: true }>>()
  for (const a of resourceAccesses) {
    if (clusterWide.has(key(a))) continue
    byNamespace.set(a.namespace, [...(byNamespace.get(a.namespace) ?? []), a])
  }
  const urls = new Map<string, Set<string>>()
  for (const a of counted) {
    if (a.resourceRequest) continue
    urls.set(a.path, (urls.get(a.path) ?? new Set()).add(a.verb))
  }
  const nonResourceRules = new Map<string, Array<string>>()
  for (const [path, verbs] of [...urls].sort(([a], [b]) => a.localeCompare(b))) {
    const v = JSON.stringify([...verbs].sort())
    nonResourceRules.set(v, [...(nonResourceRules.get(v) ?? []), path])
  }
  const out: Array<RbacObject> = []
  const subjects = [subjectOf(options.subject)]
  const clusterRules: Array<PolicyRule> = [
    ...rulesOf(cluster, restrict),
    ...[...nonResourceRules].map(([v, paths]) => ({ nonResourceURLs: paths, verbs: JSON.parse(v) as Array<string> }))
  ]
  if (clusterRules.length > 0) {
    out.push({ apiVersion: rbacApiVersion, kind: "ClusterRole", metadata: { name: options.name }, rules: clusterRules })
    out.push({
      apiVersion: rbacApiVersion,
      kind: "ClusterRoleBinding",
      metadata: { name: options.name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: options.name },
      subjects
    })
  }
  for (const [namespace, accesses] of [...byNamespace].sort(([a], [b]) => a.localeCompare(b))) {
    out.push({ apiVersion: rbacApiVersion, kind: "Role", metadata: { name: options.name, namespace }, rules: rulesOf(accesses, restrict) })
    out.push({
      apiVersion: rbacApiVersion,
      kind: "RoleBinding",
      metadata: { name: options.name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: options.name },
      subjects
    })
  }
  return out
}

/**
 * The least-privilege RBAC for every access the `FakeCluster` in context logged so far
 * (see `fromAccessLog`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const required = (options: RequiredOptions): Effect.Effect<ReadonlyArray<RbacObject>, never, FakeCluster> =>
  Effect.gen(function*() {
    const fake = yield* FakeCluster
    return fromAccessLog(fake.accessLog(), options)
  })

/**
 * Objects as one YAML stream (`---` between documents), as `kubectl apply -f` reads it.
 *
 * @since 0.2.0
 * @category formatting
 */
export const toYaml = (objects: ReadonlyArray<RbacObject>): string =>
  objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n")
