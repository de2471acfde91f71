import { defineConfig } from "vitest/config"
import { resolve } from "./vitest.config.js"

// npm run test:chaos: faults against a real control plane (cluster/), one cluster per run started by
// test/chaos/setup/globalSetup.ts. EFFECT_KUBE_CHAOS=ci (npm run test:chaos:ci) is the short version CI runs.
export default defineConfig({
  resolve,
  test: {
    include: ["test/chaos/**/*.test.ts"],
    globalSetup: ["test/chaos/setup/globalSetup.ts"],
    // One cluster, faults on its pieces: one file at a time, one test at a time.
    fileParallelism: false,
    maxWorkers: 1,
    sequence: { concurrent: false },
    testTimeout: 600_000,
    hookTimeout: 180_000
  }
})
