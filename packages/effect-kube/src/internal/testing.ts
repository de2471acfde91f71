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
 *   `Template.render` and the fake's `processedtemplates` does as the server, one code.
 *
 * @internal
 */
export { type DialFailure, type Dialer, type Handlers, type Socket, WebSocketDialer } from "./exec/dialer.js"

export { type Rendered as RenderedTemplate, renderWith as renderTemplate } from "./manifests/template.js"

/** The module of the generated built-in kinds (their Schemas and Resources), loaded on first use. @internal */
export const loadBuiltinResources = () => import("../resources/generated.js")
