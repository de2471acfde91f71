/**
 * `@kubernetes/client-node` 2.x ships with undici 8, which needs Node >= 22.19 and fails
 * to load on Node 20 (`zlib.createZstdDecompress`, `webidl.util.markAsUncloneable`).
 * On an older Node this resolves client-node's `undici` imports to the undici 7 that
 * `@effect/platform-node` installs (the same `fetch` and `Agent` API, Node >= 20.18.1),
 * so that client-node can be measured at all. Must run before client-node is imported.
 */
import * as Module from "node:module"

export const undiciRedirected: boolean = Number(process.versions.node.split(".")[0]) < 22

if (undiciRedirected) {
  const root = new URL("../package.json", import.meta.url).href
  const hooks = `
    export async function resolve(specifier, context, next) {
      if (specifier === "undici" && context.parentURL && context.parentURL.includes("/@kubernetes/client-node/")) {
        return next(specifier, { ...context, parentURL: ${JSON.stringify(root)} })
      }
      return next(specifier, context)
    }`
  Module.register(`data:text/javascript,${encodeURIComponent(hooks)}`)
}
