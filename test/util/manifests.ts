/**
 * Manifests for set tests, and a fake cluster to run them against.
 */
import * as Effect from "effect/Effect"
import type * as Kube from "../../packages/effect-kube/src/Kube.js"
import type * as Manifests from "../../packages/effect-kube/src/Manifests.js"
import { FakeCluster } from "@effect-kube/testing"
import { apiServerOnly } from "./apiServerOnly.js"

export const secretValue = "TOPSECRET-hunter2-value"

export const configMap = (name: string, data: Record<string, string> = { key: "value" }): Manifests.Manifest => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data
})

export const secret = (name: string): Manifests.Manifest => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name },
  type: "Opaque",
  stringData: { password: secretValue }
})

export const deployment = (name: string): Manifests.Manifest => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "busybox" }] } }
  }
})

export const service = (name: string): Manifests.Manifest => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }] }
})

export const withCluster = <A, E>(
  body: (cluster: FakeCluster.Service) => Effect.Effect<A, E, FakeCluster.FakeCluster | Kube.Requirements>,
  options?: FakeCluster.Options
) =>
  Effect.flatMap(FakeCluster.FakeCluster, body).pipe(Effect.provide(FakeCluster.layer({ ...apiServerOnly, ...options })))

export const writes = (cluster: FakeCluster.Service) =>
  cluster.requests().filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`)

