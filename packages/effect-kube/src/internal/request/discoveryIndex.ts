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
