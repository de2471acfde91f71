import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * Inside the workspace the packages resolve to their sources, as in tsconfig.json's paths;
 * published, to their dist through package.json exports. The e2e config shares it.
 */
export const resolve = {
  alias: [
    { find: /^effect-kube$/, replacement: source("./packages/effect-kube/src/index.ts") },
    { find: /^effect-kube\/bun$/, replacement: source("./packages/effect-kube/src/bun/index.ts") },
    { find: /^effect-kube\/deno$/, replacement: source("./packages/effect-kube/src/deno/index.ts") },
    { find: /^effect-kube\/internal\/testing$/, replacement: source("./packages/effect-kube/src/internal/testing.ts") },
    { find: /^@effect-kube\/testing$/, replacement: source("./packages/testing/src/index.ts") }
  ]
}

export default defineConfig({
  resolve,
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/e2e/**", "test/chaos/**", "test/conformance/**"],
    // the run's own TMPDIR, which must hold no private key at the end (test/setup/privateTmp.ts)
    globalSetup: ["test/setup/privateTmp.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
