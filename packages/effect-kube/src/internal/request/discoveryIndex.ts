/**
 * The discovery index requests beside the per-group-version documents of
 * `operations.ts`: the server's version, the core versions and the group list.
 */
import type { Spec } from "./spec.js"

/** `/version`: the server's build. */
export const serverVersion: Spec = {
  method: "GET",
  path: "/version",
  operation: { verb: "discovery", name: "version" }
}

/** `/api`: the versions of the core group (an APIVersions). */
export const coreVersions: Spec = { method: "GET", path: "/api", operation: { verb: "discovery", kind: "APIVersions" } }

/** `/apis`: every named group with its versions and preferred version (an APIGroupList). */
export const groups: Spec = { method: "GET", path: "/apis", operation: { verb: "discovery", kind: "APIGroupList" } }

/**
 * The Accept of `/api` and `/apis` as client-go sends it: the aggregated document
 * (`apidiscovery.k8s.io/v2`, every group version's resources in one answer), then its
 * `v2beta1` (kube-apiserver 1.26 to 1.32), then the legacy index, which every server serves.
 */
export const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json;q=0.9"

/** `/api` asking for the aggregated document of the core group. */
export const aggregatedCore: Spec = {
  ...coreVersions,
  accept: aggregatedAccept,
  operation: { verb: "discovery", kind: "APIGroupDiscoveryList", name: "api" }
}

/** `/apis` asking for the aggregated document of every named group. */
export const aggregatedGroups: Spec = {
  ...groups,
  accept: aggregatedAccept,
  operation: { verb: "discovery", kind: "APIGroupDiscoveryList", name: "apis" }
}
