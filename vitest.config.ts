import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/e2e/**", "test/chaos/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
