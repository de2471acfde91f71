/**
 * Authorization in the fake: who a request is from (the layer's user, a service-account
 * token the fake issued, `Impersonate-*` headers), what it asks to do (its attributes, as
 * the API server reads them), the log of every access with its decision, and, under
 * `authorization: "RBAC"`, the answer kube-apiserver's RBAC authorizer would give: a 403
 * Status with its message, the escalation and bind checks of role and binding writes,
 * `create` for an update or apply that creates, ClusterRole aggregation and the
 * bootstrap policy every cluster starts with (discovery, the self reviews, cluster-admin
 * for `system:masters`).
 *
 * @internal
 */
import { type Attributes, requestAttributes, type ResourceAttributes } from "./attributes.js"
import {
  authorize,
  checkAttributes,
  type Decision,
  escalation,
  forbiddenMessage,
  fullAuthority,
  privilegedGroup,
  rbacGroup,
  rulesOf
} from "./rbac.js"
import type { Requester, UserInfo } from "./requester.js"
import { deepEqual, isObject, type JsonObject } from "../store/json.js"
import type { AdmissionRequest, FakeState } from "../store/state.js"
import * as Status from "../serve/statusBodies.js"
import { userOf, verify } from "../serve/tokens.js"
import type { AccessRecord, FakeUser, Options } from "../types.js"
import { entriesOf, updateObject } from "../controllers/api.js"
import { aggregatedRoles } from "./defaultRoles.js"
import * as Meta from "../validation/meta.js"

export type { Requester, UserInfo } from "./requester.js"

/** The fake's own admin: what its token authenticates unless `Options.user` says otherwise. @internal */
export const admin: UserInfo = { username: "fake-admin", groups: [privilegedGroup, "system:authenticated"] }

const serviceAccountGroups = (namespace: string): Array<string> => ["system:serviceaccounts", `system:serviceaccounts:${namespace}`]

/** The user `Options.user` names. @internal */
export const userFrom = (user: FakeUser | undefined): UserInfo => {
  if (user === undefined) return admin
  if ("serviceAccount" in user) {
    const { name, namespace } = user.serviceAccount
    return {
      username: `system:serviceaccount:${namespace}:${name}`,
      groups: [...serviceAccountGroups(namespace), "system:authenticated"]
    }
  }
  const groups = [...(user.groups ?? [])]
  if (!groups.includes("system:authenticated")) groups.push("system:authenticated")
  return { username: user.name, ...(user.uid !== undefined ? { uid: user.uid } : {}), groups }
}

interface Room {
  readonly rbac: boolean
  readonly layerUser: UserInfo
  readonly log: Array<AccessRecord>
  readonly max: number
}

const rooms = new WeakMap<FakeState, Room>()

const roomOf = (state: FakeState): Room => {
  let room = rooms.get(state)
  if (room === undefined) {
    room = {
      rbac: state.options.authorization === "RBAC" ||
        (state.options.authorization === undefined && state.options.user !== undefined),
      layerUser: userFrom(state.options.user),
      log: [],
      max: state.options.maxRequestLog ?? 100_000
    }
    rooms.set(state, room)
  }
  return room
}

/** Whether the fake authorizes with RBAC (else it allows every request, recording it). @internal */
export const enforces = (state: FakeState): boolean => roomOf(state).rbac

/** The user a request's credentials authenticate, before impersonation. */
const authenticatedUser = (state: FakeState, authorization: string | undefined): UserInfo => {
  if (authorization !== undefined && authorization.startsWith("Bearer ")) {
    const token = authorization.slice(7)
    if (token !== state.token && token.split(".").length === 3) {
      const claims = verify(state, token)
      if (!("error" in claims)) {
        const info = userOf(claims)
        return {
          username: String(info.username),
          uid: String(info.uid),
          groups: (info.groups as Array<string>).slice(),
          extra: info.extra as Record<string, Array<string>>
        }
      }
    }
  }
  return roomOf(state).layerUser
}

/**
 * A header sent once per value (`Impersonate-Group`): a list from the in-memory client, or
 * the lines joined with `", "` by Node and `Headers`. The API server never splits a line on
 * commas; the fake splits only what a join made.
 */
const listHeader = (value: unknown): Array<string> =>
  Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string" && v !== "")
    : typeof value === "string"
    ? value.split(", ").filter((v) => v !== "")
    : []

const forbidden = (user: UserInfo, attributes: Attributes, reason: string): Status.StatusError => {
  const message = forbiddenMessage(user, attributes, reason)
  if (!attributes.resourceRequest) return new Status.StatusError(403, "Forbidden", message, {})
  return new Status.StatusError(403, "Forbidden", message, {
    ...(attributes.name !== "" ? { name: attributes.name } : {}),
    ...(attributes.apiGroup !== "" ? { group: attributes.apiGroup } : {}),
    kind: attributes.resource
  })
}

/** A Forbidden for a write the registry refused (escalation, bind): `roles.rbac... "r" is forbidden: <why>`. */
const refused = (plural: string, name: string, why: string): Status.StatusError =>
  new Status.StatusError(403, "Forbidden", `${plural}.${rbacGroup} "${name}" is forbidden: ${why}`, {
    name,
    group: rbacGroup,
    kind: plural
  })

const record = (state: FakeState, user: UserInfo, attributes: Attributes, decision: Decision): void => {
  const room = roomOf(state)
  if (room.log.length >= room.max) room.log.shift()
  room.log.push({ user: user.username, groups: user.groups, ...attributes, allowed: decision.allowed })
}

/** Decides one access and logs it (every access, whether the fake enforces RBAC or not). */
const decide = (state: FakeState, user: UserInfo, attributes: Attributes): Decision => {
  const decision = roomOf(state).rbac ? authorize(state, user, attributes) : { allowed: true, reason: "" }
  record(state, user, attributes, decision)
  return decision
}

/**
 * The impersonated user of `Impersonate-*` headers, each impersonation authorized as the
 * API server's impersonation filter does (`impersonate` on users, groups, serviceaccounts,
 * uids, userextras).
 */
const impersonated = (
  state: FakeState,
  acting: UserInfo,
  header: (name: string) => string | undefined
): UserInfo | Status.StatusError | undefined => {
  const username = listHeader(header("impersonate-user"))[0]
  const groups = listHeader(header("impersonate-group"))
  const uid = header("impersonate-uid")
  if (username === undefined || username === "") {
    if (groups.length > 0 || uid !== undefined) {
      return Status.internalError("requested impersonation of groups or uid without impersonating a user")
    }
    return undefined
  }
  const check = (attributes: ResourceAttributes): Status.StatusError | undefined => {
    const decision = decide(state, acting, attributes)
    return decision.allowed ? undefined : forbidden(acting, attributes, decision.reason)
  }
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username)
  const subject: ResourceAttributes = sa !== null
    ? { ...base("impersonate", "", "serviceaccounts"), namespace: sa[1]!, name: sa[2]! }
    : { ...base("impersonate", "", "users"), name: username }
  const denied = check(subject) ??
    groups.map((g) => check({ ...base("impersonate", "", "groups"), name: g })).find((e) => e !== undefined) ??
    (uid !== undefined ? check({ ...base("impersonate", "authentication.k8s.io", "uids"), name: uid }) : undefined)
  if (denied !== undefined) return denied
  const all = sa !== null && groups.length === 0 ? serviceAccountGroups(sa[1]!) : groups
  if (username !== "system:anonymous" && !all.includes("system:authenticated") && !all.includes("system:unauthenticated")) {
    all.push("system:authenticated")
  }
  return { username, ...(uid !== undefined ? { uid } : {}), groups: all }
}

const base = (verb: string, apiGroup: string, resource: string): ResourceAttributes => ({
  resourceRequest: true,
  verb,
  apiGroup,
  apiVersion: "v1",
  resource,
  subresource: "",
  namespace: "",
  name: ""
})

/**
 * Authorizes a request (after authentication, as the API server's filter chain does):
 * who it is from and what it asks, or the 403 to answer.
 *
 * @internal
 */
export const authorizeRequest = (
  state: FakeState,
  method: string,
  path: string,
  query: Readonly<Record<string, string>>,
  header: (name: string) => string | undefined
): Requester | Status.StatusError => {
  const acting = authenticatedUser(state, header("authorization"))
  const user = impersonated(state, acting, header) ?? acting
  if (user instanceof Status.StatusError) return user
  const attributes = requestAttributes(method, path, query)
  const decision = decide(state, user, attributes)
  if (!decision.allowed) return forbidden(user, attributes, decision.reason)
  return { user, attributes }
}

/** The log of accesses (after `reset`), oldest first. @internal */
export const accessLog = (state: FakeState): ReadonlyArray<AccessRecord> => roomOf(state).log.slice()

/** Clears the access log. @internal */
export const clearAccessLog = (state: FakeState): void => {
  roomOf(state).log.length = 0
}

/** Whether a user may do something, and why (SubjectAccessReview and its self and local forms). @internal */
export const review = (state: FakeState, user: UserInfo, attributes: Attributes): Decision =>
  roomOf(state).rbac ? authorize(state, user, attributes) : { allowed: true, reason: "the fake cluster allows every request" }

// --- writes of roles and bindings

/** Whether a write changes nothing but what the garbage collector needs (owners, finalizers). */
const onlyGcFields = (object: JsonObject, old: JsonObject | undefined): boolean => {
  if (old === undefined) return false
  const strip = (obj: JsonObject): JsonObject => {
    const metadata = { ...(obj.metadata as JsonObject) }
    for (const key of ["ownerReferences", "finalizers", "resourceVersion", "managedFields", "generation"]) delete metadata[key]
    return { ...obj, metadata }
  }
  return deepEqual(strip(object), strip(old))
}

const admitRbacWrite = (state: FakeState, request: AdmissionRequest): ReadonlyArray<string> => {
  const { kind } = request.route
  const requester = request.route.requester
  if (requester === undefined) return []
  const user = requester.user
  if (roomOf(state).rbac && kind.group === rbacGroup && !user.groups.includes(privilegedGroup)) {
    const namespace = request.route.namespace ?? ""
    const name = String((request.object.metadata as JsonObject).name ?? "")
    const gcOnly = request.operation === "UPDATE" && onlyGcFields(request.object, request.oldObject)
    if (!gcOnly && (kind.plural === "roles" || kind.plural === "clusterroles")) {
      const requestName = requester.attributes.resourceRequest ? requester.attributes.name : ""
      if (!authorize(state, user, checkAttributes("escalate", kind.plural, namespace, requestName)).allowed) {
        if (kind.plural === "clusterroles" && isObject(request.object.aggregationRule)) {
          if (escalation(state, user, "", fullAuthority, kind.plural) !== undefined) {
            throw refused(kind.plural, name, "must have cluster-admin privileges to use the aggregationRule")
          }
        }
        const missing = escalation(state, user, namespace, rulesOf(request.object), kind.plural)
        if (missing !== undefined) throw refused(kind.plural, name, missing)
      }
    }
    if (!gcOnly && (kind.plural === "rolebindings" || kind.plural === "clusterrolebindings")) {
      const roleRef = isObject(request.object.roleRef) ? request.object.roleRef : {}
      const roleKind = roleRef.kind === "ClusterRole" ? "clusterroles" : "roles"
      const roleName = String(roleRef.name ?? "")
      if (!authorize(state, user, checkAttributes("bind", roleKind, namespace, roleName)).allowed) {
        const roleObj = entriesOf(state, state.registry.byResource(rbacGroup, "v1", roleKind)!, roleKind === "roles" ? namespace : undefined)
          .find((e) => e.name === roleName)
        // kube-apiserver 1.35 words it with the resource being written: rolebindings... "r" not found
        if (roleObj === undefined) throw Status.notFound({ group: rbacGroup, plural: kind.plural }, roleName)
        const missing = escalation(state, user, namespace, rulesOf(roleObj.obj), kind.plural)
        if (missing !== undefined) throw refused(kind.plural, name, missing)
      }
    }
  }
  // an update or apply that creates needs `create` too, as the API server's handlers check
  const attributes = requester.attributes
  if (
    request.operation === "CREATE" && attributes.resourceRequest && (attributes.verb === "update" || attributes.verb === "patch")
  ) {
    const create: ResourceAttributes = { ...attributes, verb: "create" }
    const decision = decide(state, user, create)
    if (!decision.allowed) throw forbidden(user, create, decision.reason)
  }
  return []
}

// --- ClusterRole aggregation, as the clusterrole-aggregation controller does

const ruleKey = (rule: unknown): string => JSON.stringify(rule)

const aggregate = (state: FakeState): void => {
  const kind = state.registry.byResource(rbacGroup, "v1", "clusterroles")
  if (kind === undefined) return
  const all = entriesOf(state, kind, undefined)
  for (const entry of all) {
    const rule = entry.obj.aggregationRule
    if (!isObject(rule) || !Array.isArray(rule.clusterRoleSelectors)) continue
    const rules: Array<unknown> = []
    const seen = new Set<string>()
    for (const selector of rule.clusterRoleSelectors) {
      for (const other of all) {
        if (other.name === entry.name || !Meta.selectorMatches(selector, (other.obj.metadata as JsonObject).labels ?? {})) continue
        for (const r of Array.isArray(other.obj.rules) ? other.obj.rules : []) {
          if (seen.has(ruleKey(r))) continue
          seen.add(ruleKey(r))
          rules.push(r)
        }
      }
    }
    const current = Array.isArray(entry.obj.rules) ? entry.obj.rules : []
    if (deepEqual(current, rules)) continue
    const next = entry.copy()
    next.rules = rules
    updateObject(state, kind, entry, next, { keepGeneration: true })
  }
}

/** The bootstrap policy kube-apiserver writes at start that every request leans on. @internal */
export const bootstrapPolicy: ReadonlyArray<JsonObject> = (() => {
  const labels = { "kubernetes.io/bootstrapping": "rbac-defaults" }
  const annotations = { "rbac.authorization.kubernetes.io/autoupdate": "true" }
  const role = (name: string, rules: ReadonlyArray<JsonObject>): JsonObject => ({
    apiVersion: `${rbacGroup}/v1`,
    kind: "ClusterRole",
    metadata: { name, labels, annotations },
    rules
  })
  const binding = (name: string, groups: ReadonlyArray<string>): JsonObject => ({
    apiVersion: `${rbacGroup}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name, labels, annotations },
    roleRef: { apiGroup: rbacGroup, kind: "ClusterRole", name },
    subjects: groups.map((g) => ({ apiGroup: rbacGroup, kind: "Group", name: g }))
  })
  const publicInfo = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
  return [
    role("cluster-admin", [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { verbs: ["*"], nonResourceURLs: ["*"] }]),
    role("system:discovery", [{ verbs: ["get"], nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"] }]),
    role("system:basic-user", [
      { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"] },
      { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] }
    ]),
    role("system:public-info-viewer", [{ verbs: ["get"], nonResourceURLs: publicInfo }]),
    binding("cluster-admin", [privilegedGroup]),
    binding("system:discovery", ["system:authenticated"]),
    binding("system:basic-user", ["system:authenticated"]),
    binding("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
    ...aggregatedRoles.map((r): JsonObject => ({
      apiVersion: `${rbacGroup}/v1`,
      kind: "ClusterRole",
      metadata: { name: r.name, labels: { ...labels, ...r.labels }, annotations },
      ...(r.aggregate !== undefined ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: r.aggregate }] } } : {}),
      rules: r.rules ?? []
    }))
  ]
})()

/**
 * Installs the checks of role and binding writes, `create` on an update that creates,
 * and ClusterRole aggregation; answers the bootstrap objects to seed under RBAC.
 *
 * @internal
 */
export const install = (state: FakeState, options: Options): ReadonlyArray<JsonObject> => {
  state.onAdmit((request) => admitRbacWrite(state, request))
  const isClusterRole = (plural: string, group: string) => group === rbacGroup && plural === "clusterroles"
  state.onWrite((kind) => {
    if (isClusterRole(kind.plural, kind.group)) aggregate(state)
  })
  state.onRemove((kind) => {
    if (isClusterRole(kind.plural, kind.group)) aggregate(state)
  })
  return roomOf(state).rbac || options.authorization === "RBAC" ? bootstrapPolicy : []
}
