/**
 * The scenarios `Manifests.explain` is checked on, the same on the fake (test/Manifests.explain.test.ts) and on the
 * real control plane (test/e2e/explain.test.ts): the objects, when a scenario has reached the state it shows, and
 * what is normalised before two explanations are compared (names the servers generate, ages, counts, back-off
 * times and restart counts, which each node paces its own way).
 */
import * as Effect from "effect/Effect"
import type { Explanation } from "../../packages/effect-kube/src/Errors.js"
import type * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as Manifests from "../../packages/effect-kube/src/Manifests.js"

export interface Scenario {
  readonly objects: ReadonlyArray<Manifests.Manifest>
  /** The references explained (the Deployment). */
  readonly refs: ReadonlyArray<Manifests.Manifest>
  /** Whether the explanation shows what the scenario is about yet. */
  readonly reached: (explanation: ReadonlyArray<Explanation>) => boolean
}

const deployment = (name: string, replicas: number, podSpec: Record<string, unknown>): Manifests.Manifest => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 0, ...podSpec } }
  }
})

const ref = (name: string): Manifests.Manifest => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name } })

const all = (e: Explanation): ReadonlyArray<Explanation> => [e, ...e.children.flatMap(all)]

const pods = (explanation: ReadonlyArray<Explanation>) =>
  explanation.flatMap(all).filter((e) => e.ref.kind === "Pod")

const replicaSets = (explanation: ReadonlyArray<Explanation>) =>
  explanation.flatMap(all).filter((e) => e.ref.kind === "ReplicaSet")

export const scenarios: Record<"unschedulable" | "quota" | "crash", Scenario> = {
  // a nodeSelector no node matches: the scheduler's Unschedulable condition and FailedScheduling event
  unschedulable: {
    objects: [deployment("picky", 2, {
      nodeSelector: { disk: "ssd" },
      containers: [{ name: "c", image: "nginx", env: [{ name: "PASSWORD", value: "hunter2-env-value" }] }]
    })],
    refs: [ref("picky")],
    reached: (e) => {
      const found = pods(e)
      return found.length === 2 && found.every((p) =>
        p.reason === "Unschedulable" && p.events.some((ev) => ev.reason === "FailedScheduling")
      ) &&
        // the ReplicaSet controller has counted its pods (a moment after it made them)
        replicaSets(e).every((rs) => rs.summary === "2 pod(s) not ready")
    }
  },
  // a quota of one pod for a Deployment of two: the ReplicaSet's FailedCreate event and ReplicaFailure condition
  quota: {
    objects: [
      { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "pods" }, spec: { hard: { pods: "1" } } },
      deployment("greedy", 2, { containers: [{ name: "c", image: "busybox", command: ["sh", "-c", "sleep 3600"] }] })
    ],
    refs: [ref("greedy")],
    reached: (e) =>
      replicaSets(e).some((rs) => rs.reason === "FailedCreate" && rs.events.some((ev) => ev.reason === "FailedCreate")) &&
      pods(e).length === 1 && pods(e).every((p) => p.status === "Current") &&
      // the deployment controller has counted the running pod (a moment after the ReplicaSet on a real server)
      e[0]?.summary === "1/2 available"
  },
  // a container that exits (and a readiness probe neither node runs): restarted until CrashLoopBackOff
  crash: {
    objects: [
      deployment("crashy", 1, {
        containers: [{
          name: "c",
          image: "busybox",
          command: ["sh", "-c", "exit 0"],
          env: [{ name: "PASSWORD", value: "hunter2-env-value" }],
          readinessProbe: { exec: { command: ["false"] }, periodSeconds: 1 }
        }]
      })
    ],
    refs: [ref("crashy")],
    reached: (e) => pods(e).length === 1 && pods(e).every((p) => p.reason === "CrashLoopBackOff")
  }
}

/**
 * Explains until the scenario shows what it is about, `tick` between reads (a TestClock step on the fake, a real
 * sleep on the real server); fails after `attempts`.
 */
export const explainWhenReached = <R>(
  scenario: Scenario,
  namespace: string,
  tick: Effect.Effect<void, never, R>,
  attempts = 120
): Effect.Effect<ReadonlyArray<Explanation>, Kube.Error | string, Kube.Requirements | R> =>
  Effect.gen(function*() {
    let last: ReadonlyArray<Explanation> = []
    for (let i = 0; i < attempts; i++) {
      last = yield* Manifests.explain(scenario.refs, { namespace })
      if (scenario.reached(last)) return last
      yield* tick
    }
    return yield* Effect.fail(`not reached after ${attempts} reads:\n${Manifests.renderExplanation(last)}`)
  })

/** The rendering with what each server makes its own way replaced. */
export const normalise = (text: string, namespace: string): string =>
  text
    .split(namespace).join("NS")
    // ReplicaSet and Pod names: <deployment>-<template hash>[-<5 characters>]
    .replace(/\b(picky|greedy|crashy)-[a-z0-9]{6,10}-[a-z0-9]{5}(?![a-z0-9])/g, "$1-HASH-X")
    .replace(/\b(picky|greedy|crashy)-[a-z0-9]{6,10}(?![a-z0-9])/g, "$1-HASH")
    .replace(/\([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)/g, "(UID)")
    .replace(/back-off [0-9ms]+ /g, "back-off T ")
    .replace(/\d+ restart\(s\)/g, "N restart(s)")
    .replace(/used: (pods|count\/pods)=\d+/g, "used: $1=N")
    .replace(/, ×\d+/g, "")
    .replace(/\d+ (s|min|h|d) ago/g, "AGE")

/** What each scenario renders to, normalised, on the fake and on the real control plane alike. */
export const expected = {
  unschedulable: [
    "Deployment NS/picky: 0/2 available",
    "  ← ReplicaSet NS/picky-HASH: 2 pod(s) not ready",
    "    ← Pod NS/picky-HASH-X: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node " +
    "affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not " +
    "helpful for scheduling.",
    "        · Warning FailedScheduling (Event, AGE)",
    "    ← Pod NS/picky-HASH-X: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node " +
    "affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not " +
    "helpful for scheduling.",
    "        · Warning FailedScheduling (Event, AGE)"
  ].join("\n"),
  quota: [
    "Deployment NS/greedy: 1/2 available",
    "  ← ReplicaSet NS/greedy-HASH: 1/2 pod(s) created, FailedCreate: pods \"greedy-HASH-X\" is forbidden: exceeded " +
    "quota: pods, requested: pods=1, used: pods=N, limited: pods=1",
    "      · Warning FailedCreate: Error creating: pods \"greedy-HASH-X\" is forbidden: exceeded quota: pods, " +
    "requested: pods=1, used: pods=N, limited: pods=1 (Event, AGE)",
    "      · Warning FailedCreate: Error creating: pods \"greedy-HASH-X\" is forbidden: exceeded quota: pods, " +
    "requested: pods=1, used: pods=N, limited: pods=1 (Event, AGE)",
    "      · Warning FailedCreate: Error creating: pods \"greedy-HASH-X\" is forbidden: exceeded quota: pods, " +
    "requested: pods=1, used: pods=N, limited: pods=1 (Event, AGE)",
    "    ← 1 Pod ready"
  ].join("\n"),
  crash: [
    "Deployment NS/crashy: 0/1 available",
    "  ← ReplicaSet NS/crashy-HASH: 1 pod(s) not ready",
    "    ← Pod NS/crashy-HASH-X: CrashLoopBackOff, back-off T restarting failed container=c " +
    "pod=crashy-HASH-X_NS(UID), last exit code 0 (Completed), N restart(s)"
  ].join("\n")
}
