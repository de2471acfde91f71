/**
 * The fake's core controllers and kubelet, installed by its options: each on unless
 * `controllers` turns it off (`controllers: false` turns them all off); `simulate` is
 * the kubelet with its older times, log lines and every pod completing.
 *
 * @internal
 */
import type { FakeState } from "../store/state.js"
import type { ControllerOptions, KubeletOptions, Options } from "../types.js"
import { installCrds } from "./crd.js"
import { installDeployments } from "./deployment.js"
import { installDisruption } from "./disruption.js"
import { installEndpointSlices } from "./endpointslice.js"
import { installGarbageCollector } from "./gc.js"
import { installJobs } from "./job.js"
import { installKubelet, installScheduler, type KubeletConfig } from "../kubelet/kubelet.js"
import { installNamespaces } from "./namespace.js"
import { installReplicaSets } from "./replicaset.js"
import { installServiceAccounts } from "./serviceaccounts.js"
import { installStorageProtection } from "./storageProtection.js"

/** The controllers to run, with their settings. @internal */
export interface ControllerConfig {
  readonly scheduler: boolean
  readonly kubelet: KubeletConfig | undefined
  readonly deployment: boolean
  readonly replicaSet: boolean
  readonly job: boolean
  readonly namespace: { readonly contentDeletionDelayMs: number } | undefined
  readonly serviceAccount: boolean
  readonly rootCaPublisher: boolean
  readonly crd: boolean
  readonly disruption: boolean
  readonly endpointSlice: boolean
  readonly garbageCollector: boolean
  readonly storageProtection: boolean
}

/** The controllers an options object asks for. @internal */
export const configOf = (options: Options): ControllerConfig => {
  const given = options.controllers
  const all = given !== false
  const some: ControllerOptions = typeof given === "object" ? given : {}
  const on = (flag: boolean | object | undefined): boolean => all && flag !== false
  const sim = options.simulate
  const simulate = sim === undefined || sim === false ? undefined : sim === true ? {} : sim
  const kubelet: KubeletOptions | undefined = typeof some.kubelet === "object" ? some.kubelet : undefined
  const namespace = typeof some.namespace === "object" ? some.namespace : undefined
  return {
    scheduler: on(some.scheduler) || simulate !== undefined,
    kubelet: on(some.kubelet) || simulate !== undefined ?
      {
        nodeName: kubelet?.nodeName ?? "fake-node",
        podStartMs: simulate?.podStartMs ?? kubelet?.podStartMs ?? 50,
        podRunMs: simulate?.podRunMs ?? kubelet?.podRunMs ?? 150,
        podStopMs: kubelet?.podStopMs ?? 50,
        simulate: simulate === undefined ? undefined : { completePods: simulate.completePods ?? true }
      } :
      undefined,
    deployment: on(some.deployment),
    replicaSet: on(some.replicaSet),
    job: on(some.job),
    namespace: on(some.namespace) ? { contentDeletionDelayMs: namespace?.contentDeletionDelayMs ?? 500 } : undefined,
    serviceAccount: on(some.serviceAccount),
    rootCaPublisher: on(some.rootCaPublisher),
    crd: on(some.crd),
    disruption: on(some.disruption),
    endpointSlice: on(some.endpointSlice),
    garbageCollector: on(some.garbageCollector),
    storageProtection: on(some.storageProtection)
  }
}

/** Installs the controllers the fake's options ask for, and lets them catch up with what exists. @internal */
export const install = (state: FakeState): void => {
  const config = configOf(state.options)
  if (config.crd) installCrds(state)
  if (config.garbageCollector) installGarbageCollector(state)
  if (config.storageProtection) installStorageProtection(state)
  if (config.namespace !== undefined) installNamespaces(state, config.namespace.contentDeletionDelayMs)
  if (config.serviceAccount || config.rootCaPublisher) {
    installServiceAccounts(state, { serviceAccount: config.serviceAccount, rootCa: config.rootCaPublisher })
  }
  if (config.kubelet !== undefined && config.scheduler) installScheduler(state, config.kubelet.nodeName)
  if (config.kubelet !== undefined) installKubelet(state, config.kubelet)
  if (config.replicaSet) installReplicaSets(state)
  if (config.deployment) installDeployments(state)
  if (config.job) installJobs(state)
  if (config.disruption) installDisruption(state)
  if (config.endpointSlice) installEndpointSlices(state)
  state.settle()
}
