/**
 * `effect-kube/internal/testing`: the one internal entry that `@effect-kube/testing` (the
 * fake cluster's package) shares with the client. It is NOT public API: it may change in
 * any release, and nothing but `@effect-kube/testing` of the same version may import it.
 *
 * What the fake needs beyond the client's public API, and why:
 * - the exec dialer service and its shapes (`WebSocketDialer`, `Dialer`, `DialFailure`,
 *   `Handlers`, `Socket`): `FakeCluster.layer` provides an in-memory dialer in its place, so
 *   exec, attach and port-forward reach the in-memory fake;
 * - `loadBuiltinResources`: the generated built-in kinds, loaded on first use (they are
 *   large), for the fake's server-side field validation;
 * - `renderTemplate`: OpenShift Template rendering, which the client does for
 *   `Template.render` and the fake's `processedtemplates` does as the server, one code;
 * - the CEL engine (`internal/cel/`): CRD validation rules with the server's cost limits, which
 *   `CustomResource.validate` runs on the client and the fake runs on every write, and the
 *   evaluator its ValidatingAdmissionPolicies use — one engine, so both answer alike. Its
 *   evaluator, `@bufbuild/cel`, is loaded on first use.
 *
 * @internal
 */
export { type DialFailure, type Dialer, type Handlers, type Socket, WebSocketDialer } from "./exec/dialer.js"

export { type Rendered as RenderedTemplate, renderWith as renderTemplate } from "./manifests/template.js"

/** The module of the generated built-in kinds (their Schemas and Resources), loaded on first use. @internal */
export const loadBuiltinResources = () => import("../resources/generated.js")

export * as CelCost from "./cel/cost.js"
export { type Library as CelLibrary, library as celLibrary } from "./cel/library.js"
export {
  anyRules as celAnyRules,
  check as celCheck,
  compile as celCompile,
  type CompileError as CelCompileError,
  evaluateExpression as celEvaluate,
  type Program as CelProgram,
  program as celProgram,
  type VersionRules as CelVersionRules
} from "./cel/rules.js"
export { toCel } from "./cel/values.js"
