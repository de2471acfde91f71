/**
 * The RBAC authorizer, as kube-apiserver's (plugin/pkg/auth/authorizer/rbac): a request is
 * allowed when a rule of a Role or ClusterRole bound to its user (by name, group or
 * service account) matches its verb, API group, resource (`*`, `pods/log`, `* /log`),
 * name and namespace, or its non-resource path; members of `system:masters` are allowed
 * everything before RBAC is asked. It answers the reasons the API server gives
 * (`RBAC: allowed by RoleBinding "b/ns" of Role "r" to User "u"`), the rules a user holds
 * in a namespace (SelfSubjectRulesReview), and whether rules cover others (the escalation
 * check of role and binding writes).
 *
 * @internal
 */
import { type Attributes, combinedResource, type ResourceAttributes } from "./attributes.js"
import type { FakeState } from "../store/state.js"
import { isObject, type JsonObject } from "../store/json.js"
import type { KindInfo } from "../store/kinds.js"
import type { UserInfo } from "./requester.js"

export type { UserInfo } from "./requester.js"

/** A rule of a Role or ClusterRole. @internal */
export interface PolicyRule {
  readonly verbs: ReadonlyArray<string>
  readonly apiGroups?: ReadonlyArray<string> | undefined
  readonly resources?: ReadonlyArray<string> | undefined
  readonly resourceNames?: ReadonlyArray<string> | undefined
  readonly nonResourceURLs?: ReadonlyArray<string> | undefined
}

/** @internal */
export const rbacGroup = "rbac.authorization.k8s.io"

/** The group whose members the API server allows everything. @internal */
export const privilegedGroup = "system:masters"

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

/** The rules of a stored Role or ClusterRole. @internal */
export const rulesOf = (obj: JsonObject): ReadonlyArray<PolicyRule> =>
  (Array.isArray(obj.rules) ? obj.rules : []).filter(isObject).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs)
  }))

const kindOf = (state: FakeState, plural: string): KindInfo | undefined => state.registry.byResource(rbacGroup, "v1", plural)

/** The stored objects of an RBAC kind, sorted by namespace and name. */
const objectsOf = (state: FakeState, plural: string, namespace?: string): Array<JsonObject> => {
  const kind = kindOf(state, plural)
  if (kind === undefined) return []
  const collection = state.store.existing(kind)
  if (collection === undefined) return []
  const out: Array<JsonObject> = []
  for (const key of collection.keys()) {
    const entry = collection.entries.get(key)!
    if (namespace === undefined || entry.namespace === namespace) out.push(entry.obj)
  }
  return out
}

const nameOf = (obj: JsonObject): string => String((obj.metadata as JsonObject | undefined)?.name ?? "")

/** The Role or ClusterRole a binding refers to, or the lister's NotFound message. */
const roleOf = (
  state: FakeState,
  roleRef: JsonObject,
  bindingNamespace: string
): { readonly rules: ReadonlyArray<PolicyRule> } | { readonly error: MissingRole } => {
  const name = String(roleRef.name ?? "")
  const isCluster = roleRef.kind === "ClusterRole"
  const plural = isCluster ? "clusterroles" : "roles"
  const kind = kindOf(state, plural)
  const entry = kind === undefined
    ? undefined
    : state.store.existing(kind)?.entries.get(`${isCluster ? "" : bindingNamespace}/${name}`)
  if (entry === undefined) return { error: { cluster: isCluster, name } }
  return { rules: rulesOf(entry.obj) }
}

const serviceAccountUser = (namespace: string, name: string): string => `system:serviceaccount:${namespace}:${name}`

/** Whether a binding's subject is the user: the subject that matched, or undefined. */
const subjectFor = (binding: JsonObject, user: UserInfo, bindingNamespace: string): JsonObject | undefined => {
  const subjects = Array.isArray(binding.subjects) ? binding.subjects.filter(isObject) : []
  return subjects.find((s) => {
    const name = String(s.name ?? "")
    switch (s.kind) {
      case "User":
        return user.username === name
      case "Group":
        return user.groups.includes(name)
      case "ServiceAccount": {
        const namespace = typeof s.namespace === "string" && s.namespace !== "" ? s.namespace : bindingNamespace
        return namespace !== "" && user.username === serviceAccountUser(namespace, name)
      }
      default:
        return false
    }
  })
}

const describeSubject = (subject: JsonObject, bindingNamespace: string): string => {
  if (subject.kind === "ServiceAccount") {
    const namespace = typeof subject.namespace === "string" && subject.namespace !== "" ? subject.namespace : bindingNamespace
    return `ServiceAccount "${String(subject.name)}/${namespace}"`
  }
  return `${String(subject.kind)} "${String(subject.name)}"`
}

/** A binding's role that does not exist. @internal */
export interface MissingRole {
  readonly cluster: boolean
  readonly name: string
}

/** As the authorizer's listers word it: `role.rbac.authorization.k8s.io "r" not found`. */
const listerNotFound = (missing: MissingRole): string =>
  `${missing.cluster ? "clusterrole" : "role"}.${rbacGroup} "${missing.name}" not found`

/** Where a rule came from, as the authorizer's reason names it. */
type Visitor = (source: () => string, rule: PolicyRule | undefined, error: MissingRole | undefined) => boolean

/**
 * Visits the rules a user holds in a namespace: ClusterRoleBindings first, then the
 * namespace's RoleBindings; stops when the visitor answers false.
 */
const visitRules = (state: FakeState, user: UserInfo, namespace: string, visit: Visitor): void => {
  for (const binding of objectsOf(state, "clusterrolebindings")) {
    const subject = subjectFor(binding, user, "")
    if (subject === undefined) continue
    const roleRef = isObject(binding.roleRef) ? binding.roleRef : {}
    const source = () =>
      `ClusterRoleBinding "${nameOf(binding)}" of ${String(roleRef.kind)} "${String(roleRef.name)}" to ${
        describeSubject(subject, "")
      }`
    const role = roleOf(state, roleRef, "")
    if ("error" in role) {
      if (!visit(source, undefined, role.error)) return
      continue
    }
    for (const rule of role.rules) if (!visit(source, rule, undefined)) return
  }
  if (namespace === "") return
  for (const binding of objectsOf(state, "rolebindings", namespace)) {
    const subject = subjectFor(binding, user, namespace)
    if (subject === undefined) continue
    const roleRef = isObject(binding.roleRef) ? binding.roleRef : {}
    const source = () =>
      `RoleBinding "${nameOf(binding)}/${namespace}" of ${String(roleRef.kind)} "${String(roleRef.name)}" to ${
        describeSubject(subject, namespace)
      }`
    const role = roleOf(state, roleRef, namespace)
    if ("error" in role) {
      if (!visit(source, undefined, role.error)) return
      continue
    }
    for (const rule of role.rules) if (!visit(source, rule, undefined)) return
  }
}

const has = (set: ReadonlyArray<string> | undefined, value: string): boolean => set !== undefined && set.includes(value)

const resourceMatches = (rule: PolicyRule, combined: string, subresource: string): boolean =>
  (rule.resources ?? []).some((r) =>
    r === "*" || r === combined ||
    (subresource !== "" && r.length === subresource.length + 2 && r.startsWith("*/") && r.endsWith(subresource))
  )

const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some((u) =>
    u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.replace(/\*+$/, "")))
  )

/** Whether one rule allows a request. @internal */
export const ruleAllows = (attributes: Attributes, rule: PolicyRule): boolean => {
  if (!(has(rule.verbs, "*") || has(rule.verbs, attributes.verb))) return false
  if (!attributes.resourceRequest) return nonResourceURLMatches(rule, attributes.path)
  const groups = rule.apiGroups ?? []
  if (!(groups.includes("*") || groups.includes(attributes.apiGroup))) return false
  if (!resourceMatches(rule, combinedResource(attributes), attributes.subresource)) return false
  const names = rule.resourceNames ?? []
  return names.length === 0 || (attributes.name !== "" && names.includes(attributes.name))
}

/** An authorization decision and the API server's reason for it. @internal */
export interface Decision {
  readonly allowed: boolean
  readonly reason: string
}

const aggregate = (errors: ReadonlyArray<string>): string =>
  errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`

/** Whether RBAC (and `system:masters`) allows a request. @internal */
export const authorize = (state: FakeState, user: UserInfo, attributes: Attributes): Decision => {
  if (user.groups.includes(privilegedGroup)) return { allowed: true, reason: "" }
  let allowedBy: string | undefined
  const errors: Array<string> = []
  const namespace = attributes.resourceRequest ? attributes.namespace : ""
  visitRules(state, user, namespace, (source, rule, error) => {
    if (error !== undefined) {
      errors.push(listerNotFound(error))
      return true
    }
    if (rule !== undefined && ruleAllows(attributes, rule)) {
      allowedBy = source()
      return false
    }
    return true
  })
  if (allowedBy !== undefined) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` }
  return { allowed: false, reason: errors.length === 0 ? "" : `RBAC: ${aggregate(errors)}` }
}

/** The rules a user holds in a namespace (cluster-wide ones with `""`), and the errors met. @internal */
export const rulesFor = (
  state: FakeState,
  user: UserInfo,
  namespace: string
): { readonly rules: ReadonlyArray<PolicyRule>; readonly errors: ReadonlyArray<MissingRole> } => {
  const rules: Array<PolicyRule> = []
  const errors: Array<MissingRole> = []
  visitRules(state, user, namespace, (_source, rule, error) => {
    if (rule !== undefined) rules.push(rule)
    if (error !== undefined) errors.push(error)
    return true
  })
  return { rules, errors }
}

/** A forbidden request's message, as `responsewriters.forbiddenMessage` and `NewForbidden` write it. @internal */
export const forbiddenMessage = (user: UserInfo, attributes: Attributes, reason: string): string => {
  let message: string
  if (!attributes.resourceRequest) {
    message = `User "${user.username}" cannot ${attributes.verb} path "${attributes.path}"`
  } else {
    const resource = combinedResource(attributes)
    message = attributes.namespace !== ""
      ? `User "${user.username}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" in the namespace "${attributes.namespace}"`
      : `User "${user.username}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" at the cluster scope`
  }
  if (reason !== "") message = `${message}: ${reason}`
  if (!attributes.resourceRequest) return `forbidden: ${message}`
  const qualified = attributes.apiGroup === "" ? attributes.resource : `${attributes.resource}.${attributes.apiGroup}`
  return attributes.name === "" ? `${qualified} is forbidden: ${message}` : `${qualified} "${attributes.name}" is forbidden: ${message}`
}

// --- escalation: whether rules a user holds cover the rules a role or binding would grant

const breakdown = (rule: PolicyRule): Array<PolicyRule> => {
  const out: Array<PolicyRule> = []
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? []
        if (names.length > 0) {
          for (const name of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] })
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] })
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] })
  }
  return out
}

const hasAll = (set: ReadonlyArray<string> | undefined, values: ReadonlyArray<string> | undefined): boolean =>
  (values ?? []).every((v) => has(set, v))

const resourceCoversAll = (set: ReadonlyArray<string>, covers: ReadonlyArray<string>): boolean => {
  if (set.includes("*") || hasAll(set, covers)) return true
  return covers.every((path) => {
    if (set.includes(path)) return true
    const slash = path.indexOf("/")
    if (slash < 0) return false
    return set.includes(`*/${path.slice(slash + 1)}`)
  })
}

const nonResourceURLCovers = (owner: string, sub: string): boolean =>
  owner === sub || (owner.endsWith("*") && sub.startsWith(owner.replace(/\*+$/, "")))

const ruleCovers = (owner: PolicyRule, sub: PolicyRule): boolean => {
  const verbs = has(owner.verbs, "*") || hasAll(owner.verbs, sub.verbs)
  const groups = has(owner.apiGroups, "*") || hasAll(owner.apiGroups, sub.apiGroups)
  const resources = resourceCoversAll(owner.resources ?? [], sub.resources ?? [])
  const urls = (sub.nonResourceURLs ?? []).every((path) =>
    (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, path))
  )
  const ownerNames = owner.resourceNames ?? []
  const subNames = sub.resourceNames ?? []
  const names = subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames)
  return verbs && groups && resources && names && urls
}

/** The parts of `rules` that `owner` does not cover (empty when it covers them all). @internal */
export const uncovered = (owner: ReadonlyArray<PolicyRule>, rules: ReadonlyArray<PolicyRule>): Array<PolicyRule> =>
  rules.flatMap(breakdown).filter((sub) => !owner.some((o) => ruleCovers(o, sub)))

/** `CompactRules`: single-resource rules of the same group, resource and name merged. */
const compact = (rules: ReadonlyArray<PolicyRule>): Array<PolicyRule> => {
  const out: Array<PolicyRule> = []
  const simple = new Map<string, { apiGroups: Array<string>; resources: Array<string>; verbs: Array<string>; resourceNames?: Array<string> }>()
  for (const rule of rules) {
    const names = rule.resourceNames ?? []
    const isSimple = names.length <= 1 && (rule.nonResourceURLs ?? []).length === 0 &&
      (rule.apiGroups ?? []).length === 1 && (rule.resources ?? []).length === 1
    if (!isSimple) {
      out.push(rule)
      continue
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], names[0] ?? null])
    const existing = simple.get(key)
    if (existing !== undefined) existing.verbs.push(...rule.verbs)
    else {
      simple.set(key, {
        apiGroups: [...rule.apiGroups!],
        resources: [...rule.resources!],
        verbs: [...rule.verbs],
        ...(names.length > 0 ? { resourceNames: [...names] } : {})
      })
    }
  }
  return [...out, ...simple.values()]
}

const goQuoted = (values: ReadonlyArray<string>): string => `[${values.map((v) => JSON.stringify(v)).join(" ")}]`

/** `rbacv1helpers.CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
const compactString = (rule: PolicyRule): string => {
  const parts: Array<string> = []
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoted(rule.apiGroups!)}`)
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${goQuoted(rule.resources!)}`)
  if ((rule.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${goQuoted(rule.nonResourceURLs!)}`)
  if ((rule.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuoted(rule.resourceNames!)}`)
  if (rule.verbs.length > 0) parts.push(`Verbs:${goQuoted(rule.verbs)}`)
  return `{${parts.join(", ")}}`
}

/**
 * `ConfirmNoEscalation`: undefined when the user holds every rule in the namespace, else
 * the API server's message listing what is missing. The registry's role getter words a
 * missing role with the resource being written (`rolebindings.rbac... "r" not found`), as
 * kube-apiserver 1.35 does.
 *
 * @internal
 */
export const escalation = (
  state: FakeState,
  user: UserInfo,
  namespace: string,
  rules: ReadonlyArray<PolicyRule>,
  writtenPlural: string
): string | undefined => {
  const held = rulesFor(state, user, namespace)
  const missing = uncovered(held.rules, rules)
  if (missing.length === 0) return undefined
  const descriptions = [...new Set(compact(missing).map(compactString))].sort()
  let message = `user "${user.username}" (groups=${goQuoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${
    descriptions.join("\n")
  }`
  if (held.errors.length > 0) {
    message += `; resolution errors: [${held.errors.map((e) => `${writtenPlural}.${rbacGroup} "${e.name}" not found`).join(" ")}]`
  }
  return message
}

/** Every right: what a ClusterRole with an `aggregationRule` needs its author to hold. @internal */
export const fullAuthority: ReadonlyArray<PolicyRule> = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] }
]

/** The attributes of an `escalate` or `bind` check. @internal */
export const checkAttributes = (
  verb: "escalate" | "bind",
  resource: string,
  namespace: string,
  name: string
): ResourceAttributes => ({
  resourceRequest: true,
  verb,
  apiGroup: rbacGroup,
  apiVersion: "*",
  resource,
  subresource: "",
  namespace,
  name
})
