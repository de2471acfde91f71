import { defineConfig } from "vitest/config"
import { resolve } from "./vitest.config.js"

// npm run test:conformance: the scenarios of test/conformance run against a real control plane (the e2e global
// setup starts one, or uses the one EFFECT_KUBE_E2E_KUBECONFIG names) and against FakeCluster.serve, compared.
export default defineConfig({
  resolve,
  test: {
    include: ["test/conformance/**/*.test.ts"],
    globalSetup: ["test/e2e/setup/globalSetup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 600_000
  }
})
