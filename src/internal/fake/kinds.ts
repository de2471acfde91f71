/**
 * The kinds the fake API server serves: a table of built-in kinds plus custom
 * resources registered from options or from CustomResourceDefinition objects.
 *
 * @internal
 */
import type { ResourceSpec } from "./types.js"

/** @internal */
export interface KindInfo {
  readonly group: string
  /** Every served version; the first is the one objects are stored in. */
  readonly versions: ReadonlyArray<string>
  readonly kind: string
  readonly listKind: string
  readonly plural: string
  readonly singular: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  /** Subresources served besides the object itself: `status`, `log`, `scale`. */
  readonly subresources: ReadonlyArray<string>
  /** A custom resource: no strategic merge patch, deletes answer the object. */
  readonly custom: boolean
  /** Writes to the main resource keep the stored `status` (a status subresource exists). */
  readonly hasStatus: boolean
  /** Field selectors beyond `metadata.name` and `metadata.namespace`. */
  readonly fieldSelectors: ReadonlyArray<string>
  /** `label` kinds need an RFC 1123 label as name, others a subdomain. */
  readonly nameRule: "label" | "subdomain" | "path"
  readonly categories?: ReadonlyArray<string> | undefined
}

const allVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const

/** @internal */
export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

/** @internal */
export const splitApiVersion = (apiVersion: string): { readonly group: string; readonly version: string } => {
  const slash = apiVersion.indexOf("/")
  return slash === -1
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

/** @internal */
export const collectionId = (k: Pick<KindInfo, "group" | "plural">): string => `${k.group}/${k.plural}`

interface KindSpec {
  readonly group?: string
  readonly version?: string
  readonly kind: string
  readonly plural: string
  readonly namespaced?: boolean
  readonly shortNames?: ReadonlyArray<string>
  readonly subresources?: ReadonlyArray<string>
  readonly hasStatus?: boolean
  readonly fieldSelectors?: ReadonlyArray<string>
  readonly nameRule?: KindInfo["nameRule"]
  readonly verbs?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
}

const builtin = (s: KindSpec): KindInfo => ({
  group: s.group ?? "",
  versions: [s.version ?? "v1"],
  kind: s.kind,
  listKind: `${s.kind}List`,
  plural: s.plural,
  singular: s.kind.toLowerCase(),
  namespaced: s.namespaced ?? true,
  shortNames: s.shortNames ?? [],
  verbs: s.verbs ?? allVerbs,
  subresources: s.subresources ?? (s.hasStatus ? ["status"] : []),
  custom: false,
  hasStatus: s.hasStatus ?? false,
  fieldSelectors: s.fieldSelectors ?? [],
  nameRule: s.nameRule ?? "subdomain",
  categories: s.categories
})

const all = ["all"]

/** @internal */
export const builtinKinds: ReadonlyArray<KindInfo> = [
  builtin({
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    subresources: ["log", "status"],
    hasStatus: true,
    categories: all,
    fieldSelectors: [
      "spec.nodeName",
      "spec.restartPolicy",
      "spec.schedulerName",
      "spec.serviceAccountName",
      "spec.hostNetwork",
      "status.phase",
      "status.podIP",
      "status.nominatedNodeName"
    ]
  }),
  builtin({
    kind: "Service",
    plural: "services",
    shortNames: ["svc"],
    hasStatus: true,
    nameRule: "label",
    categories: all
  }),
  builtin({ kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] }),
  builtin({ kind: "Secret", plural: "secrets", fieldSelectors: ["type"] }),
  builtin({
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    shortNames: ["ns"],
    hasStatus: true,
    nameRule: "label",
    fieldSelectors: ["status.phase"],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"]
  }),
  builtin({ kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] }),
  builtin({
    kind: "Event",
    plural: "events",
    shortNames: ["ev"],
    fieldSelectors: [
      "involvedObject.kind",
      "involvedObject.namespace",
      "involvedObject.name",
      "involvedObject.uid",
      "involvedObject.apiVersion",
      "involvedObject.resourceVersion",
      "involvedObject.fieldPath",
      "reason",
      "reportingComponent",
      "source",
      "type"
    ]
  }),
  builtin({ kind: "Endpoints", plural: "endpoints", shortNames: ["ep"] }),
  builtin({
    kind: "Node",
    plural: "nodes",
    namespaced: false,
    shortNames: ["no"],
    hasStatus: true,
    fieldSelectors: ["spec.unschedulable"]
  }),
  builtin({ kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", shortNames: ["pvc"], hasStatus: true }),
  builtin({
    group: "apps",
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    subresources: ["scale", "status"],
    hasStatus: true,
    categories: all
  }),
  builtin({
    group: "apps",
    kind: "StatefulSet",
    plural: "statefulsets",
    shortNames: ["sts"],
    subresources: ["scale", "status"],
    hasStatus: true,
    categories: all
  }),
  builtin({
    group: "apps",
    kind: "DaemonSet",
    plural: "daemonsets",
    shortNames: ["ds"],
    hasStatus: true,
    categories: all
  }),
  builtin({
    group: "apps",
    kind: "ReplicaSet",
    plural: "replicasets",
    shortNames: ["rs"],
    subresources: ["scale", "status"],
    hasStatus: true,
    categories: all
  }),
  builtin({
    group: "batch",
    kind: "Job",
    plural: "jobs",
    hasStatus: true,
    fieldSelectors: ["status.successful"],
    categories: all
  }),
  builtin({
    group: "batch",
    kind: "CronJob",
    plural: "cronjobs",
    shortNames: ["cj"],
    hasStatus: true,
    categories: all
  }),
  builtin({ group: "rbac.authorization.k8s.io", kind: "Role", plural: "roles", nameRule: "path" }),
  builtin({ group: "rbac.authorization.k8s.io", kind: "RoleBinding", plural: "rolebindings", nameRule: "path" }),
  builtin({
    group: "rbac.authorization.k8s.io",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
    nameRule: "path"
  }),
  builtin({
    group: "rbac.authorization.k8s.io",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
    nameRule: "path"
  }),
  builtin({
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
    shortNames: ["crd", "crds"],
    hasStatus: true
  }),
  builtin({ group: "template.openshift.io", kind: "Template", plural: "templates" }),
  builtin({
    group: "template.openshift.io",
    kind: "Template",
    plural: "processedtemplates",
    verbs: ["create"]
  })
]

/** @internal */
export const customKind = (
  spec: ResourceSpec,
  options: {
    readonly versions?: ReadonlyArray<string>
    readonly hasStatus?: boolean
    readonly subresources?: ReadonlyArray<string>
  } = {}
): KindInfo => {
  const { group, version } = splitApiVersion(spec.apiVersion)
  const hasStatus = options.hasStatus ?? false
  return {
    group,
    versions: options.versions ?? [version],
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    verbs: allVerbs,
    subresources: options.subresources ?? (hasStatus ? ["status"] : []),
    custom: true,
    hasStatus,
    fieldSelectors: [],
    nameRule: "subdomain"
  }
}

/** The kinds of a registry, looked up by path or by apiVersion and kind. @internal */
export class Registry {
  private readonly byPath = new Map<string, KindInfo>()
  private readonly byKind = new Map<string, KindInfo>()
  private readonly ordered: Array<KindInfo> = []

  constructor(kinds: ReadonlyArray<KindInfo>) {
    for (const k of kinds) this.add(k)
  }

  /** Adds a kind, replacing one with the same group and plural. */
  add(kind: KindInfo): void {
    const previous = this.ordered.findIndex((k) => k.group === kind.group && k.plural === kind.plural)
    if (previous !== -1) {
      const old = this.ordered[previous]!
      for (const v of old.versions) {
        this.byPath.delete(`${old.group}/${v}/${old.plural}`)
        if (this.byKind.get(`${apiVersionOf(old.group, v)}/${old.kind}`) === old) {
          this.byKind.delete(`${apiVersionOf(old.group, v)}/${old.kind}`)
        }
      }
      this.ordered.splice(previous, 1, kind)
    } else {
      this.ordered.push(kind)
    }
    for (const v of kind.versions) {
      this.byPath.set(`${kind.group}/${v}/${kind.plural}`, kind)
      const key = `${apiVersionOf(kind.group, v)}/${kind.kind}`
      // processedtemplates shares its kind with templates; the stored kind wins
      if (!this.byKind.has(key) || kind.verbs.includes("get")) this.byKind.set(key, kind)
    }
  }

  remove(group: string, plural: string): void {
    const index = this.ordered.findIndex((k) => k.group === group && k.plural === plural)
    if (index === -1) return
    const old = this.ordered[index]!
    this.ordered.splice(index, 1)
    for (const v of old.versions) {
      this.byPath.delete(`${old.group}/${v}/${old.plural}`)
      const key = `${apiVersionOf(old.group, v)}/${old.kind}`
      if (this.byKind.get(key) === old) this.byKind.delete(key)
    }
  }

  byResource(group: string, version: string, plural: string): KindInfo | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`)
  }

  /** By `Kind`, or by plural, lower-case singular or short name. */
  lookup(apiVersion: string, kindOrPlural: string): KindInfo | undefined {
    const exact = this.byKind.get(`${apiVersion}/${kindOrPlural}`)
    if (exact !== undefined) return exact
    const { group, version } = splitApiVersion(apiVersion)
    const lower = kindOrPlural.toLowerCase()
    return this.ordered.find(
      (k) =>
        k.group === group &&
        k.versions.includes(version) &&
        k.verbs.includes("get") &&
        (k.plural === lower || k.singular === lower || k.kind.toLowerCase() === lower || k.shortNames.includes(lower))
    )
  }

  all(): ReadonlyArray<KindInfo> {
    return this.ordered
  }
}
