/**
 * The implementation of `Kube.api`: binds the operations (`operations.ts`, `watch.ts`,
 * `watcher.ts`, `logs.ts`, `waitFor.ts`) to a resource and namespace. Nothing else
 * lives here, and no implementation module imports it: the facade is on top.
 */
import type * as Kube from "../Kube.js"
import type * as Resource from "../Resource.js"
import type * as Watcher from "../Watcher.js"
import * as logs from "./api/logs.js"
import * as operations from "./api/operations.js"
import * as reflector from "./runtime/reflector.js"
import * as subresources from "./api/subresources.js"
import * as table from "./api/table.js"
import type { Target } from "./request/inputChecks.js"
import * as waitFor from "./runtime/waitFor.js"
import * as watch from "./api/watch.js"
import * as watcher from "./runtime/watcher.js"

/**
 * Builds the operations for a resource; the facade narrows them to what the kind serves
 * and adds exec, attach and port-forward where it serves those.
 */
export const make = <A, I, S extends string>(
  resource: Resource.Resource<A, I, S>,
  options?: { readonly namespace?: string | undefined }
): Kube.Operations<A, unknown> & Kube.LogOperations => {
  const target: Target<A, I> = { resource, namespace: options?.namespace }
  const api: Omit<Kube.Operations<A, unknown>, "reflector"> & Kube.LogOperations = {
    resource: resource as Resource.Resource<A, unknown, string>,
    namespace: options?.namespace,
    create: (object, writeOptions) => operations.create(target, object, writeOptions),
    get: (name, getOptions) => operations.get(target, name, getOptions),
    getOrFail: (name, getOptions) => operations.getOrFail(target, name, getOptions),
    list: (listOptions) => operations.list(target, listOptions),
    replace: (name, object, writeOptions) => operations.replace(target, name, object, writeOptions),
    patch: (name, patch, writeOptions) => operations.patch(target, name, patch, writeOptions),
    apply: (configuration, applyOptions) => operations.apply(target, configuration, applyOptions),
    delete: (name, deleteOptions) => operations.del(target, name, deleteOptions),
    deleteWithResult: (name, deleteOptions) => subresources.deleteWithResult(target, name, deleteOptions),
    deleteAll: (deleteOptions) => operations.deleteAll(target, deleteOptions),
    watch: (watchOptions) => watch.watch(target, watchOptions ?? {}),
    listStream: (streamOptions) => watch.listStream(target, streamOptions ?? {}),
    watcher: (watcherOptions) => watcher.watcher(target, watcherOptions ?? {}),
    waitFor: (name, condition, waitOptions) => waitFor.waitFor(target, name, condition, waitOptions),
    table: (tableOptions) => table.table(target, tableOptions),
    // Offered by the type only where the resource serves "log"; a kind whose subresources
    // are not known at compile time still gets the runtime check (pods only).
    logs: (name, logOptions) => logs.logs(target, name, logOptions ?? {}),
    logStream: (name, logOptions) => logs.logStream(target, name, logOptions ?? {}),
    logBytes: (name, logOptions) => logs.logBytes(target, name, logOptions ?? {})
  }
  // Subresource operations: the type offers each only where S has the subresource.
  return Object.assign(
    api,
    { reflector: (watcherOptions?: Watcher.ReflectorOptions<A>) => reflector.reflector(api, watcherOptions ?? {}) },
    subresources.status(target),
    subresources.scale(target),
    subresources.eviction(target),
    subresources.ephemeralContainers(target),
    subresources.resize(target),
    subresources.token(target),
    subresources.proxy(target)
  )
}
