/**
 * The kinds the fake API server serves: a table of built-in kinds plus custom
 * resources registered from options or from CustomResourceDefinition objects.
 *
 * @internal
 */
import { type Conversion, eventsEvent } from "./conversion.js"
import { specKinds } from "./generated.js"
import type { ResourceSpec } from "../types.js"

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
  /**
   * Served out of another kind's storage (events.k8s.io Events are core Events): its objects are
   * that kind's, converted on the way in and out.
   */
  readonly storedAs?: StoredAs | undefined
}

/** The kind whose objects a kind serves, and the conversion between them. @internal */
export interface StoredAs extends Conversion {
  readonly kind: KindInfo
}

const allVerbs: ReadonlyArray<string> = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
// the order in which kube-apiserver lists a custom resource's verbs in discovery
const customVerbs: ReadonlyArray<string> = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]

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

/** What the spec does not say about a built-in kind: kubectl's short names, field selectors, name rules. */
interface KindExtras {
  readonly shortNames?: ReadonlyArray<string>
  readonly fieldSelectors?: ReadonlyArray<string>
  readonly nameRule?: KindInfo["nameRule"]
  readonly categories?: ReadonlyArray<string>
}

const all = ["all"]
// kube-apiserver puts the kinds that extend the API (webhooks, admission policies, CRDs, APIServices) in one category
const apiExtensions = ["api-extensions"]

const extras: Record<string, KindExtras> = {
  "/pods": {
    shortNames: ["po"],
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
  },
  "/services": { shortNames: ["svc"], nameRule: "label", categories: all },
  "/configmaps": { shortNames: ["cm"] },
  "/componentstatuses": { shortNames: ["cs"] },
  "/secrets": { fieldSelectors: ["type"] },
  "/namespaces": { shortNames: ["ns"], nameRule: "label", fieldSelectors: ["status.phase"] },
  "/serviceaccounts": { shortNames: ["sa"] },
  "/events": {
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
  },
  "/endpoints": { shortNames: ["ep"] },
  "/nodes": { shortNames: ["no"], fieldSelectors: ["spec.unschedulable"] },
  "/persistentvolumeclaims": { shortNames: ["pvc"] },
  "/persistentvolumes": { shortNames: ["pv"] },
  "/replicationcontrollers": { shortNames: ["rc"], categories: all },
  "/resourcequotas": { shortNames: ["quota"] },
  "/limitranges": { shortNames: ["limits"] },
  "apps/deployments": { shortNames: ["deploy"], categories: all },
  "apps/statefulsets": { shortNames: ["sts"], categories: all },
  "apps/daemonsets": { shortNames: ["ds"], categories: all },
  "apps/replicasets": { shortNames: ["rs"], categories: all },
  "batch/jobs": { fieldSelectors: ["status.successful"], categories: all },
  "batch/cronjobs": { shortNames: ["cj"], categories: all },
  "autoscaling/horizontalpodautoscalers": { shortNames: ["hpa"], categories: all },
  "networking.k8s.io/ingresses": { shortNames: ["ing"] },
  "networking.k8s.io/networkpolicies": { shortNames: ["netpol"] },
  "policy/poddisruptionbudgets": { shortNames: ["pdb"] },
  "storage.k8s.io/storageclasses": { shortNames: ["sc"] },
  "rbac.authorization.k8s.io/roles": { nameRule: "path" },
  "rbac.authorization.k8s.io/rolebindings": { nameRule: "path" },
  "rbac.authorization.k8s.io/clusterroles": { nameRule: "path" },
  "rbac.authorization.k8s.io/clusterrolebindings": { nameRule: "path" },
  "apiextensions.k8s.io/customresourcedefinitions": { shortNames: ["crd", "crds"], categories: apiExtensions },
  "apiregistration.k8s.io/apiservices": { categories: apiExtensions },
  "admissionregistration.k8s.io/mutatingwebhookconfigurations": { categories: apiExtensions },
  "admissionregistration.k8s.io/validatingwebhookconfigurations": { categories: apiExtensions },
  "admissionregistration.k8s.io/validatingadmissionpolicies": { categories: apiExtensions },
  "admissionregistration.k8s.io/validatingadmissionpolicybindings": { categories: apiExtensions },
  "admissionregistration.k8s.io/mutatingadmissionpolicies": { categories: apiExtensions },
  "admissionregistration.k8s.io/mutatingadmissionpolicybindings": { categories: apiExtensions },
  "networking.k8s.io/ipaddresses": { shortNames: ["ip"] },
  "storage.k8s.io/volumeattributesclasses": { shortNames: ["vac"] },
  "certificates.k8s.io/certificatesigningrequests": { shortNames: ["csr"] },
  "scheduling.k8s.io/priorityclasses": { shortNames: ["pc"] },
  "events.k8s.io/events": { shortNames: ["ev"], fieldSelectors: Object.keys(eventsEvent.fieldLabels) }
}

const builtin = (
  [group, versions, kind, plural, namespaced, verbs, subresources]: (typeof specKinds)[number],
  extra: KindExtras = extras[`${group}/${plural}`] ?? {}
): KindInfo => ({
  group,
  versions,
  kind,
  listKind: `${kind}List`,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  shortNames: extra.shortNames ?? [],
  verbs,
  subresources,
  custom: false,
  hasStatus: subresources.includes("status"),
  fieldSelectors: extra.fieldSelectors ?? [],
  nameRule: extra.nameRule ?? "subdomain",
  categories: extra.categories
})

/** events.k8s.io Events served out of the core Events' storage, as kube-apiserver serves them. */
const withStorage = (kinds: ReadonlyArray<KindInfo>): ReadonlyArray<KindInfo> => {
  const coreEvents = kinds.find((k) => k.group === "" && k.plural === "events")!
  return kinds.map((k) =>
    k.group === "events.k8s.io" && k.plural === "events" ? { ...k, storedAs: { ...eventsEvent, kind: coreEvents } } : k
  )
}

/**
 * Every kind of the Kubernetes OpenAPI spec (generated into `generated.ts`, subresources
 * limited to those the fake implements), plus OpenShift's templates.
 *
 * @internal
 */
export const builtinKinds: ReadonlyArray<KindInfo> = [
  ...withStorage(specKinds.map((k) => builtin(k))),
  // OpenShift lists the create-only processedtemplates first: a client must pick by verbs
  builtin(["template.openshift.io", ["v1"], "Template", "processedtemplates", true, ["create"], []], {}),
  builtin(["template.openshift.io", ["v1"], "Template", "templates", true, allVerbs, []], {})
]

/** @internal */
export const customKind = (
  spec: ResourceSpec,
  options: {
    readonly versions?: ReadonlyArray<string>
    readonly hasStatus?: boolean
    readonly subresources?: ReadonlyArray<string>
    /** Fields a field selector may name besides the name and namespace (a CRD's `selectableFields`). */
    readonly fieldSelectors?: ReadonlyArray<string>
    /** Groups such as `all` that `kubectl get <category>` lists the kind in. */
    readonly categories?: ReadonlyArray<string>
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
    verbs: customVerbs,
    subresources: options.subresources ?? (hasStatus ? ["status"] : []),
    custom: true,
    hasStatus,
    fieldSelectors: options.fieldSelectors ?? [],
    nameRule: "subdomain",
    categories: options.categories
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
