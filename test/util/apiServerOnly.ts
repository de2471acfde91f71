/**
 * FakeCluster as the API server alone, the way envtest runs one: no controllers nor kubelet
 * writing beside the test, and a namespace created by the first write into it. For tests of
 * the client (lists, watches, applies, readiness...) written against a fake that had neither:
 * they check what the client does with the server's answers, not what a cluster's
 * controllers would add. Tests of the fake itself use its defaults (FakeCluster*.test.ts).
 */
import type * as FakeCluster from "../../src/testing/FakeCluster.js"

export const apiServerOnly = {
  controllers: false,
  autoCreateNamespaces: true
} as const satisfies FakeCluster.Options
