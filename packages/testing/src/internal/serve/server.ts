/**
 * The fake Kubernetes API server: an in-memory store behind a request handler that
 * speaks the API server's HTTP protocol (paths, verbs, content types, Status bodies,
 * watch streams, pod logs, discovery), plus the controls tests use to seed state,
 * drive pods and jobs, and inject faults.
 *
 * Transport-free: `handleRaw` takes a parsed request and returns status, headers and
 * a string or streaming body. The web adapter (`handle`) and the `node:http` adapter
 * (`node.ts`) wrap it.
 *
 * This class only assembles the parts, each a module over the shared `FakeState`:
 * `routing` (dispatch), `reads`, `writes`, `deletes`, `subresources` (scale, logs),
 * `crds`, `simulation` (kubelet and job controller), `faults`, `controls`, and
 * `template` (processedtemplates).
 *
 * @internal
 */
import * as Authz from "../authz/index.js"
import type { FakeClock } from "../store/clock.js"
import * as CrdRules from "../cel/crdRules.js"
import * as Policies from "../cel/policies.js"
import * as Controls from "./controls.js"
import * as Crds from "../store/crds.js"
import * as Exec from "../kubelet/exec.js"
import { type RawRequest, type RawResponse, toWebResponse } from "./http.js"
import { customKind } from "../store/kinds.js"
import * as Routing from "./routing.js"
import * as Simulation from "../kubelet/simulation.js"
import { FakeState } from "../store/state.js"
import * as Subresources from "../writes/subresources.js"
import type { Control, Options } from "../types.js"

/** @internal */
export class FakeServer {
  private readonly state: FakeState
  readonly control: Control

  /** `clock` runs the fake's timers (the Effect Clock of a layer or `serve`; real time by default). */
  constructor(readonly options: Options = {}, clock?: FakeClock) {
    const state = this.state = new FakeState(options, clock)
    Crds.install(state)
    CrdRules.install(state)
    Policies.install(state)
    Simulation.install(state)
    Subresources.install(state)
    for (const r of options.resources ?? []) state.registry.add(customKind(r))
    const bootstrap = Authz.install(state, options)
    this.control = Controls.make(state)
    if (bootstrap.length > 0) this.control.seed(bootstrap)
    if (options.objects !== undefined) this.control.seed(options.objects)
  }

  /** The kubeconfig's namespace, and the one controls use when a ref has none. */
  get defaultNamespace(): string {
    return this.state.defaultNamespace
  }

  /** Stops timers and ends every open watch and log stream. */
  close(): void {
    this.state.close()
  }

  /** Answers a web `Request`. A reset fault rejects (before the answer) or errors the body. */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const raw = await this.handleRaw({
      method: request.method,
      url: url.pathname + url.search,
      header: (name) => request.headers.get(name) ?? undefined,
      text: () => request.text(),
      bytes: () => request.arrayBuffer().then((b) => new Uint8Array(b)),
      signal: request.signal
    })
    return toWebResponse(raw, request.signal)
  }

  /**
   * Checks an exec, attach or port-forward upgrade request (WebSocket or SPDY) as the API
   * server does before it upgrades: the session to start on the connection, or the HTTP
   * answer refusing it.
   */
  upgrade(request: Exec.UpgradeRequest, transport: Exec.Transport): Promise<Exec.Decision> {
    return Exec.decide(this.state, this.options, request, transport)
  }

  /** Answers a transport-free request. */
  handleRaw(request: RawRequest): Promise<RawResponse> {
    return Routing.handleRaw(this.state, request)
  }
}
