import { defineConfig } from "vitest/config"
import { resolve } from "./vitest.config.js"

// npm run test:e2e: the tests in test/e2e against a real control plane (cluster/),
// started once per run by test/e2e/setup/globalSetup.ts, or the one
// EFFECT_KUBE_E2E_KUBECONFIG names.
export default defineConfig({
  // The packages resolve to their sources, as in npm test.
  resolve,
  test: {
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/e2e/setup/globalSetup.ts"],
    // One cluster, two cores: one test file at a time, each against the same cluster.
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
