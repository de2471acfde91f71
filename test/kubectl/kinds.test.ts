/**
 * kubectl against the fake cluster served over HTTPS, for kinds that were not hand-written
 * before they were generated from the spec: a StatefulSet, an Ingress and a Lease are
 * discovered, created, applied server-side and read back by a real kubectl.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Option from "effect/Option"
import * as Kube from "../../packages/effect-kube/src/Kube.js"
import * as NodeKube from "../../packages/effect-kube/src/NodeKube.js"
import { Ingresses, Leases, StatefulSets } from "../../packages/effect-kube/src/resources/index.js"
import { hasKubectl, ok, serveWithToken, session, suiteName } from "../util/kubectl.js"

const statefulSetYaml = (replicas: number) => `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels:
    app: db
spec:
  serviceName: db
  replicas: ${replicas}
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: postgres
        image: postgres:17
        resources:
          requests:
            cpu: 500m
            memory: 1Gi
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 10Gi
`

const ingressYaml = (host: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  ingressClassName: nginx
  rules:
  - host: ${host}
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`

const leaseYaml = (holder: string) => `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: leader
spec:
  holderIdentity: ${holder}
  leaseDurationSeconds: 15
  renewTime: "2024-05-01T10:00:00.000000Z"
`

const suite = suiteName("kubectl against FakeCluster.serve: generated kinds")

describe(suite, () => {
  it.effect.skipIf(!hasKubectl)(
    "get, create -f and apply --server-side of a StatefulSet, an Ingress and a Lease; read back typed by effect-kube",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-kinds")
        const write = (name: string, text: string) => {
          const file = Path.join(dir, name)
          Fs.writeFileSync(file, text)
          return file
        }

        for (const plural of ["statefulsets", "ingresses", "leases"]) {
          assert.deepStrictEqual(JSON.parse(ok(yield* run("get", plural, "-o", "json"))).items, [], plural)
        }

        assert.match(ok(yield* run("create", "-f", write("sts.yaml", statefulSetYaml(1)))), /^statefulset.apps\/db created$/m)
        assert.match(ok(yield* run("create", "-f", write("ing.yaml", ingressYaml("a.example.com")))),
          /^ingress.networking.k8s.io\/web created$/m)
        assert.match(ok(yield* run("create", "-f", write("lease.yaml", leaseYaml("pod-a")))),
          /^lease.coordination.k8s.io\/leader created$/m)
        const again = yield* run("create", "-f", Path.join(dir, "sts.yaml"))
        assert.notStrictEqual(again.code, 0)
        assert.include(again.stderr, "already exists")

        // as on a real server, an apply that changes what `kubectl create` set conflicts until forced
        const conflict = yield* run("apply", "--server-side", "-f", write("sts.yaml", statefulSetYaml(3)))
        assert.notStrictEqual(conflict.code, 0)
        assert.include(conflict.stderr, ".spec.replicas")
        assert.match(ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", Path.join(dir, "sts.yaml"))),
          /^statefulset.apps\/db serverside-applied$/m)
        assert.match(ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", write("ing.yaml", ingressYaml("b.example.com")))),
          /^ingress.networking.k8s.io\/web serverside-applied$/m)
        assert.match(ok(yield* run("apply", "--server-side", "--force-conflicts", "-f", write("lease.yaml", leaseYaml("pod-b")))),
          /^lease.coordination.k8s.io\/leader serverside-applied$/m)

        const sts = JSON.parse(ok(yield* run("get", "statefulset", "db", "-o", "json")))
        assert.strictEqual(sts.spec.replicas, 3)
        const ing = JSON.parse(ok(yield* run("get", "ingress", "web", "-o", "json")))
        assert.strictEqual(ing.spec.rules[0].host, "b.example.com")
        const lease = JSON.parse(ok(yield* run("get", "lease", "leader", "-o", "json")))
        assert.strictEqual(lease.spec.holderIdentity, "pod-b")
        assert.match(ok(yield* run("get", "sts")), /^db\s/m)

        // what kubectl wrote decodes with the generated Schemas, typed, as the client reads it
        const [set, ingress, held] = yield* Effect.all([
          Kube.api(StatefulSets, { namespace: "default" }).get("db"),
          Kube.api(Ingresses, { namespace: "default" }).get("web"),
          Kube.api(Leases, { namespace: "default" }).get("leader")
        ]).pipe(
          Effect.map(([set, ingress, lease]) => [Option.getOrThrow(set), Option.getOrThrow(ingress), Option.getOrThrow(lease)] as const),
          Effect.provide(NodeKube.layerFromFile({ path: served.kubeconfigPath }))
        )
        assert.strictEqual(set.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.["storage"], "10Gi")
        assert.strictEqual(set.spec?.replicas, 3)
        assert.strictEqual(ingress.spec?.rules?.[0]?.http?.paths[0]?.pathType, "Prefix")
        assert.strictEqual(held.spec?.holderIdentity, "pod-b")
        assert.strictEqual(held.spec?.leaseDurationSeconds, 15)
      }),
    120_000
  )

  it.effect.skipIf(!hasKubectl)(
    "Events are one resource: kubectl get events and get events.v1.events.k8s.io list what either API wrote",
    () =>
      Effect.gen(function*() {
        const served = yield* serveWithToken()
        const { dir, run } = yield* session(served.kubeconfigPath, "kubectl-events")
        const file = Path.join(dir, "events.yaml")
        Fs.writeFileSync(file, eventsYaml)
        assert.match(ok(yield* run("create", "-f", file)), /^event\/backoff created\nevent.events.k8s.io\/scheduled created$/m)

        const names = (text: string) => JSON.parse(text).items.map((e: { metadata: { name: string } }) => e.metadata.name)
        const core = ok(yield* run("get", "events", "-o", "json"))
        const events = ok(yield* run("get", "events.v1.events.k8s.io", "-o", "json"))
        assert.deepStrictEqual(names(core), ["backoff", "scheduled"])
        assert.deepStrictEqual(names(events), ["backoff", "scheduled"])
        assert.deepStrictEqual(
          JSON.parse(core).items.map((e: { message: string }) => e.message),
          JSON.parse(events).items.map((e: { note: string }) => e.note)
        )
        // the table of either API: the core Event printer's columns, a row per Event
        const table = ok(yield* run("get", "events.v1.events.k8s.io"))
        assert.match(table, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m)
        assert.match(table, /Warning\s+BackOff\s+pod\/web\s+Back-off restarting failed container/)
        assert.match(table, /Normal\s+Scheduled\s+pod\/web\s+Successfully assigned default\/web to node-1/)
        assert.match(ok(yield* run("get", "events", "--field-selector", "reason=Scheduled", "-o", "name")), /^event\/scheduled\n$/)
        assert.match(
          ok(yield* run("get", "events.v1.events.k8s.io", "--field-selector", "regarding.name=web", "-o", "name")),
          /^event.events.k8s.io\/backoff\nevent.events.k8s.io\/scheduled\n$/
        )
        assert.match(ok(yield* run("delete", "events.v1.events.k8s.io", "backoff")), /deleted/)
        assert.deepStrictEqual(names(ok(yield* run("get", "events", "-o", "json"))), ["scheduled"])
      }),
    120_000
  )
})

const eventsYaml = `apiVersion: v1
kind: Event
metadata:
  name: backoff
involvedObject:
  kind: Pod
  name: web
  namespace: default
reason: BackOff
message: Back-off restarting failed container
source:
  component: kubelet
type: Warning
count: 3
firstTimestamp: "2026-12-01T09:00:00Z"
lastTimestamp: "2026-12-01T09:30:00Z"
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: scheduled
eventTime: "2026-12-01T10:00:00.000000Z"
reportingController: default-scheduler
reportingInstance: scheduler-1
action: Binding
reason: Scheduled
regarding:
  kind: Pod
  name: web
  namespace: default
note: Successfully assigned default/web to node-1
type: Normal
`
