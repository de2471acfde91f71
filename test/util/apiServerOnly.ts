/**
 * FakeCluster as the API server alone, the way envtest runs one: no controllers nor kubelet
 * writing beside the test, and a namespace created by the first write into it. Only for tests
 * of what the client does with the server's own answers, where a controller's write would be
 * noise the test cannot tell from the client's doing: exact watch event sequences on pods the
 * kubelet would run (Watch, Streams, Watcher, Invalid), exact counts of a kind's objects or of
 * requests and resourceVersions (reliability, pinned backoff and error texts, KubeConfigEncoding,
 * Controller, LeaderElection's sharding), a Job whose status a test plays itself (Template).
 * Still here only for want of a move: the Manifests helpers (util/manifests.ts, ApplySet) write
 * into namespaces they never create.
 *
 * Everything else uses FakeCluster's defaults, as a real cluster is: controllers on, the
 * namespace's kube-root-ca.crt there, a namespace created before writing into it. A test that
 * passes on the defaults should pass against a real cluster.
 */
import { type FakeCluster } from "@effect-kube/testing"

export const apiServerOnly = {
  controllers: false,
  autoCreateNamespaces: true
} as const satisfies FakeCluster.Options
