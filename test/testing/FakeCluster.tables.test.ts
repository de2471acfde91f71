/**
 * The Table form (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) and the other
 * negotiated forms, through real HTTP requests to the fake: each kind's printer columns and
 * cells as kube-apiserver's printers give them, a CRD's `additionalPrinterColumns`,
 * `includeObject`, Table watches (column definitions in the first event only), and the
 * 406 answers of the API server's transforms.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Effect, Fiber, Stream } from "effect"
import type * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"
import { FakeCluster } from "@effect-kube/testing"

const base = "http://fake-cluster.local"
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

interface Column {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
}

interface Table {
  readonly kind: string
  readonly apiVersion: string
  readonly metadata: Record<string, unknown>
  readonly columnDefinitions: ReadonlyArray<Column> | null
  readonly rows: ReadonlyArray<{ readonly cells: ReadonlyArray<unknown>; readonly conditions?: unknown; readonly object?: any }>
}

const call = (method: "GET" | "POST" | "PATCH", path: string, accept: string, body?: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(`${base}${path}`).pipe(HttpClientRequest.setHeader("accept", accept))
    if (body !== undefined) {
      request = HttpClientRequest.bodyText(
        request,
        JSON.stringify(body),
        method === "PATCH" ? "application/merge-patch+json" : "application/json"
      )
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, body: JSON.parse(text) }
  }).pipe(Effect.scoped)

const tableOf = (path: string, accept = tableAccept) =>
  Effect.map(call("GET", path, accept), (answer) => {
    assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
    return answer.body as Table
  })

/** The cells of each row, by column name (all columns, the wide ones included). */
const rowsOf = (table: Table): Array<Record<string, unknown>> =>
  table.rows.map((row) => Object.fromEntries(table.columnDefinitions!.map((c, i) => [c.name, row.cells[i]])))

const names = (table: Table): Array<string> => table.columnDefinitions!.map((c) => c.name)

const ago = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/\.\d{3}Z$/, "Z")
const minutes = (n: number) => n * 60_000

type Env = FakeCluster.FakeCluster | HttpClient.HttpClient | KubeConfig.KubeConfig

const withCluster = <A, E>(effect: Effect.Effect<A, E, Env>, objects: ReadonlyArray<unknown> = []) =>
  Effect.provide(effect, FakeCluster.layer({ objects, controllers: false }))

const pod = (name: string, status: Record<string, unknown>, spec: Record<string, unknown> = {}, meta = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, creationTimestamp: ago(minutes(30)), ...meta },
  spec: { containers: [{ name: "main", image: "busybox" }], ...spec },
  status
})

const running = (extra: Record<string, unknown> = {}) => ({
  name: "main",
  ready: true,
  restartCount: 0,
  state: { running: { startedAt: ago(minutes(29)) } },
  ...extra
})

describe("Tables: built-in printers", () => {
  it.live("pods: NAME READY STATUS RESTARTS AGE, and the wide IP NODE NOMINATED NODE READINESS GATES", () =>
    withCluster(
      Effect.gen(function*() {
        const table = yield* tableOf("/api/v1/namespaces/default/pods")
        assert.strictEqual(table.kind, "Table")
        assert.strictEqual(table.apiVersion, "meta.k8s.io/v1")
        assert.deepStrictEqual(names(table), [
          "Name",
          "Ready",
          "Status",
          "Restarts",
          "Age",
          "IP",
          "Node",
          "Nominated Node",
          "Readiness Gates"
        ])
        assert.deepStrictEqual(table.columnDefinitions!.map((c) => c.priority), [0, 0, 0, 0, 0, 1, 1, 1, 1])
        assert.deepStrictEqual(table.columnDefinitions![0], {
          name: "Name",
          type: "string",
          format: "name",
          description:
            "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
          priority: 0
        })
        const rows = Object.fromEntries(rowsOf(table).map((r) => [r["Name"], r]))
        assert.deepStrictEqual(rows["web"], {
          Name: "web",
          Ready: "1/1",
          Status: "Running",
          Restarts: "2 (5m ago)",
          Age: "30m",
          IP: "10.0.0.7",
          Node: "node-1",
          "Nominated Node": "<none>",
          "Readiness Gates": "<none>"
        })
        assert.deepStrictEqual(
          [rows["crash"]!["Ready"], rows["crash"]!["Status"], rows["crash"]!["Restarts"]],
          ["0/1", "CrashLoopBackOff", "7 (3m ago)"]
        )
        assert.strictEqual(rows["init"]!["Status"], "Init:0/2")
        assert.strictEqual(rows["init-failed"]!["Status"], "Init:ExitCode:3")
        assert.strictEqual(rows["done"]!["Status"], "Completed")
        assert.strictEqual(rows["pending"]!["Status"], "Pending")
        assert.strictEqual(rows["pending"]!["Ready"], "0/2")
        assert.strictEqual(rows["leaving"]!["Status"], "Terminating")
        assert.strictEqual(rows["sidecar"]!["Ready"], "2/2")
        assert.strictEqual(rows["gated"]!["Readiness Gates"], "1/2")
        const done = table.rows.find((r) => r.cells[0] === "done")!
        assert.deepStrictEqual(done.conditions, [{
          type: "Completed",
          status: "True",
          reason: "Succeeded",
          message: "The pod has completed successfully."
        }])
        // the object of each row is its PartialObjectMetadata
        assert.deepStrictEqual(
          Object.keys(table.rows[0]!.object),
          ["kind", "apiVersion", "metadata"]
        )
        assert.strictEqual(table.rows[0]!.object.kind, "PartialObjectMetadata")
        assert.strictEqual(table.rows[0]!.object.apiVersion, "meta.k8s.io/v1")
      }),
      [
        pod("web", {
          phase: "Running",
          podIPs: [{ ip: "10.0.0.7" }],
          conditions: [{ type: "Ready", status: "True" }],
          containerStatuses: [
            running({ restartCount: 2, lastState: { terminated: { exitCode: 1, finishedAt: ago(minutes(5)) } } })
          ]
        }, { nodeName: "node-1" }),
        pod("crash", {
          phase: "Running",
          containerStatuses: [{
            name: "main",
            ready: false,
            restartCount: 7,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { exitCode: 2, finishedAt: ago(minutes(3)) } }
          }]
        }),
        pod("init", {
          phase: "Pending",
          initContainerStatuses: [{ name: "setup", ready: false, restartCount: 0, state: { running: {} } }]
        }, {
          initContainers: [{ name: "setup", image: "busybox" }, { name: "migrate", image: "busybox" }]
        }),
        pod("init-failed", {
          phase: "Pending",
          initContainerStatuses: [{ name: "setup", ready: false, restartCount: 0, state: { terminated: { exitCode: 3 } } }]
        }, { initContainers: [{ name: "setup", image: "busybox" }] }),
        pod("done", {
          phase: "Succeeded",
          containerStatuses: [{ name: "main", ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: "Completed" } } }]
        }),
        pod("pending", { phase: "Pending" }, {
          containers: [{ name: "a", image: "busybox" }, { name: "b", image: "busybox" }]
        }),
        pod("leaving", { phase: "Running", containerStatuses: [running()] }, {}, {
          deletionTimestamp: ago(0),
          finalizers: ["example.com/hold"]
        }),
        pod("sidecar", {
          phase: "Running",
          conditions: [{ type: "Initialized", status: "True" }, { type: "Ready", status: "True" }],
          initContainerStatuses: [{ name: "proxy", ready: true, started: true, restartCount: 0, state: { running: {} } }],
          containerStatuses: [running()]
        }, { initContainers: [{ name: "proxy", image: "envoy", restartPolicy: "Always" }] }),
        pod("gated", {
          phase: "Running",
          conditions: [{ type: "example.com/a", status: "True" }, { type: "example.com/b", status: "False" }],
          containerStatuses: [running()]
        }, { readinessGates: [{ conditionType: "example.com/a" }, { conditionType: "example.com/b" }] })
      ]
    ))

  it.live("deployments, replica sets, stateful sets, daemon sets, jobs and cron jobs", () =>
    withCluster(
      Effect.gen(function*() {
        const deployments = yield* tableOf("/apis/apps/v1/namespaces/default/deployments")
        assert.deepStrictEqual(names(deployments), [
          "Name",
          "Ready",
          "Up-to-date",
          "Available",
          "Age",
          "Containers",
          "Images",
          "Selector"
        ])
        assert.deepStrictEqual(deployments.rows[0]!.cells, ["web", "2/3", 3, 2, "2d", "nginx,sidecar", "nginx:1.27,envoy", "app=web,tier in (a,b)"])
        const replicaSets = yield* tableOf("/apis/apps/v1/namespaces/default/replicasets")
        assert.deepStrictEqual(names(replicaSets).slice(0, 5), ["Name", "Desired", "Current", "Ready", "Age"])
        assert.deepStrictEqual(replicaSets.rows[0]!.cells, ["web-5d8f", 3, 3, 1, "2d", "nginx", "nginx:1.27", "app=web"])
        const sets = yield* tableOf("/apis/apps/v1/namespaces/default/statefulsets")
        assert.deepStrictEqual(sets.rows[0]!.cells, ["db", "1/1", "2d", "pg", "postgres:17"])
        const daemons = yield* tableOf("/apis/apps/v1/namespaces/default/daemonsets")
        assert.deepStrictEqual(names(daemons).slice(0, 8), [
          "Name",
          "Desired",
          "Current",
          "Ready",
          "Up-to-date",
          "Available",
          "Node Selector",
          "Age"
        ])
        assert.deepStrictEqual(daemons.rows[0]!.cells.slice(0, 8), ["agent", 4, 4, 3, 4, 3, "kubernetes.io/os=linux", "2d"])
        const jobs = rowsOf(yield* tableOf("/apis/batch/v1/namespaces/default/jobs"))
        assert.deepStrictEqual(
          jobs.map((j) => [j["Name"], j["Status"], j["Completions"], j["Duration"]]),
          [
            ["done", "Complete", "1/1", "5m"],
            ["failed", "Failed", "0/1", ""],
            ["parallel", "Running", "2/1 of 3", "10m"],
            ["suspended", "Suspended", "0/5", ""]
          ]
        )
        const cron = yield* tableOf("/apis/batch/v1/namespaces/default/cronjobs")
        assert.deepStrictEqual(names(cron).slice(0, 7), [
          "Name",
          "Schedule",
          "Timezone",
          "Suspend",
          "Active",
          "Last Schedule",
          "Age"
        ])
        assert.deepStrictEqual(cron.rows[0]!.cells.slice(0, 7), ["nightly", "0 3 * * *", "<none>", "False", 1, "3h", "2d"])
      }),
      [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web", creationTimestamp: ago(minutes(60 * 48 + 1)) },
          spec: {
            replicas: 3,
            selector: {
              matchLabels: { app: "web" },
              matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }]
            },
            template: {
              metadata: { labels: { app: "web", tier: "a" } },
              spec: { containers: [{ name: "nginx", image: "nginx:1.27" }, { name: "sidecar", image: "envoy" }] }
            }
          },
          status: { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 }
        },
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: { name: "web-5d8f", creationTimestamp: ago(minutes(60 * 48 + 1)) },
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "nginx", image: "nginx:1.27" }] } }
          },
          status: { replicas: 3, readyReplicas: 1 }
        },
        {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: { name: "db", creationTimestamp: ago(minutes(60 * 48 + 1)) },
          spec: {
            selector: { matchLabels: { app: "db" } },
            serviceName: "db",
            template: { metadata: { labels: { app: "db" } }, spec: { containers: [{ name: "pg", image: "postgres:17" }] } }
          },
          status: { replicas: 1, readyReplicas: 1 }
        },
        {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "agent", creationTimestamp: ago(minutes(60 * 48 + 1)) },
          spec: {
            selector: { matchLabels: { app: "agent" } },
            template: {
              metadata: { labels: { app: "agent" } },
              spec: { nodeSelector: { "kubernetes.io/os": "linux" }, containers: [{ name: "agent", image: "agent:1" }] }
            }
          },
          status: {
            desiredNumberScheduled: 4,
            currentNumberScheduled: 4,
            numberReady: 3,
            updatedNumberScheduled: 4,
            numberAvailable: 3
          }
        },
        ...[
          {
            name: "done",
            spec: { completions: 1 },
            status: {
              succeeded: 1,
              startTime: ago(minutes(20)),
              completionTime: ago(minutes(15)),
              conditions: [{ type: "Complete", status: "True" }]
            }
          },
          { name: "failed", spec: { completions: 1 }, status: { conditions: [{ type: "Failed", status: "True" }] } },
          { name: "parallel", spec: { parallelism: 3 }, status: { succeeded: 2, startTime: ago(minutes(10)) } },
          {
            name: "suspended",
            spec: { completions: 5, suspend: true },
            status: { conditions: [{ type: "Suspended", status: "True" }] }
          }
        ].map((j) => ({
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: j.name, creationTimestamp: ago(minutes(30)) },
          spec: { ...j.spec, template: { spec: { restartPolicy: "Never", containers: [{ name: "run", image: "busybox" }] } } },
          status: j.status
        })),
        {
          apiVersion: "batch/v1",
          kind: "CronJob",
          metadata: { name: "nightly", creationTimestamp: ago(minutes(60 * 48 + 1)) },
          spec: {
            schedule: "0 3 * * *",
            suspend: false,
            jobTemplate: { spec: { template: { spec: { containers: [{ name: "run", image: "busybox" }] } } } }
          },
          status: { active: [{ name: "nightly-1" }], lastScheduleTime: ago(minutes(180)) }
        }
      ]
    ))

  it.live("services, nodes, namespaces, config maps, secrets, events, claims and the default Name / Created At", () =>
    withCluster(
      Effect.gen(function*() {
        const services = Object.fromEntries(
          rowsOf(yield* tableOf("/api/v1/namespaces/default/services")).map((r) => [r["Name"], r])
        )
        assert.deepStrictEqual(services["web"], {
          Name: "web",
          Type: "ClusterIP",
          "Cluster-IP": "10.96.0.10",
          "External-IP": "<none>",
          "Port(s)": "80/TCP,443/TCP",
          Age: "30m",
          Selector: "app=web"
        })
        assert.strictEqual(services["node"]!["Port(s)"], "80:30080/TCP")
        assert.strictEqual(services["lb"]!["External-IP"], "<pending>")
        assert.strictEqual(services["lb-ready"]!["External-IP"], "203.0.113.7,lb.example.com")
        assert.strictEqual(services["external"]!["External-IP"], "db.example.com")

        const nodes = yield* tableOf("/api/v1/nodes")
        assert.deepStrictEqual(names(nodes).slice(0, 5), ["Name", "Status", "Roles", "Age", "Version"])
        assert.deepStrictEqual(nodes.rows[0]!.cells.slice(0, 5), ["n1", "Ready,SchedulingDisabled", "control-plane", "30m", "v1.35.0"])

        const namespaces = rowsOf(yield* tableOf("/api/v1/namespaces"))
        assert.deepStrictEqual(Object.keys(namespaces[0]!), ["Name", "Status", "Age"])
        assert.isTrue(namespaces.some((n) => n["Name"] === "default" && n["Status"] === "Active"))

        const cms = rowsOf(yield* tableOf("/api/v1/namespaces/default/configmaps"))
        assert.deepStrictEqual(cms.find((c) => c["Name"] === "settings"), { Name: "settings", Data: 3, Age: "30m" })
        const secrets = yield* tableOf("/api/v1/namespaces/default/secrets")
        assert.deepStrictEqual(names(secrets), ["Name", "Type", "Data", "Age"])
        assert.deepStrictEqual(
          secrets.rows.find((r) => r.cells[0] === "tls")!.cells,
          ["tls", "kubernetes.io/tls", 2, "30m"]
        )

        const events = yield* tableOf("/api/v1/namespaces/default/events")
        assert.deepStrictEqual(names(events), [
          "Last Seen",
          "Type",
          "Reason",
          "Object",
          "Subobject",
          "Source",
          "Message",
          "First Seen",
          "Count",
          "Name"
        ])
        assert.deepStrictEqual(events.rows[0]!.cells, [
          "2m",
          "Warning",
          "BackOff",
          "pod/web",
          "spec.containers{main}",
          "kubelet, node-1",
          "Back-off restarting failed container",
          "30m",
          4,
          "web.17f"
        ])
        // one storage: the events.k8s.io Event is a core one too, and both APIs list both, in the same columns
        assert.deepStrictEqual(events.rows.map((r) => r.cells[9]), ["web.17f", "web.18a"])
        const newEvents = yield* tableOf("/apis/events.k8s.io/v1/namespaces/default/events")
        assert.deepStrictEqual(names(newEvents), names(events))
        assert.deepStrictEqual(newEvents.rows.map((r) => r.cells), events.rows.map((r) => r.cells))
        assert.deepStrictEqual(newEvents.rows[1]!.cells.slice(0, 4), ["5m", "Normal", "Scheduled", "pod/web"])
        assert.strictEqual(newEvents.rows[1]!.cells[8], 1)

        const claims = yield* tableOf("/api/v1/namespaces/default/persistentvolumeclaims")
        assert.deepStrictEqual(claims.rows[0]!.cells, ["data", "Bound", "pv-1", "1Gi", "RWO,RWX", "fast", "<unset>", "30m", "Filesystem"])

        const roles = yield* tableOf("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles")
        assert.deepStrictEqual(roles.columnDefinitions!.map((c) => [c.name, c.type]), [["Name", "string"], ["Created At", "date"]])
        assert.deepStrictEqual(roles.rows[0]!.cells, ["reader", "2024-05-01T10:00:00Z"])
      }),
      [
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "web", creationTimestamp: ago(minutes(30)) },
          spec: {
            type: "ClusterIP",
            clusterIP: "10.96.0.10",
            clusterIPs: ["10.96.0.10"],
            selector: { app: "web" },
            ports: [{ port: 80, protocol: "TCP" }, { port: 443, protocol: "TCP" }]
          }
        },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "node" },
          spec: { type: "NodePort", clusterIPs: ["10.96.0.11"], ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }] }
        },
        { apiVersion: "v1", kind: "Service", metadata: { name: "lb" }, spec: { type: "LoadBalancer", ports: [] } },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "lb-ready" },
          spec: { type: "LoadBalancer", ports: [] },
          status: { loadBalancer: { ingress: [{ hostname: "lb.example.com" }, { ip: "203.0.113.7" }] } }
        },
        { apiVersion: "v1", kind: "Service", metadata: { name: "external" }, spec: { type: "ExternalName", externalName: "db.example.com" } },
        {
          apiVersion: "v1",
          kind: "Node",
          metadata: { name: "n1", creationTimestamp: ago(minutes(30)), labels: { "node-role.kubernetes.io/control-plane": "" } },
          spec: { unschedulable: true },
          status: { conditions: [{ type: "Ready", status: "True" }], nodeInfo: { kubeletVersion: "v1.35.0" } }
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings", creationTimestamp: ago(minutes(30)) },
          data: { a: "1", b: "2" },
          binaryData: { c: "AA==" }
        },
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "tls", creationTimestamp: ago(minutes(30)) },
          type: "kubernetes.io/tls",
          data: { "tls.crt": "AA==", "tls.key": "AA==" }
        },
        {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name: "web.17f" },
          involvedObject: { kind: "Pod", name: "web", namespace: "default", fieldPath: "spec.containers{main}" },
          reason: "BackOff",
          message: "Back-off restarting failed container\n",
          type: "Warning",
          count: 4,
          firstTimestamp: ago(minutes(30)),
          lastTimestamp: ago(minutes(2)),
          source: { component: "kubelet", host: "node-1" }
        },
        {
          apiVersion: "events.k8s.io/v1",
          kind: "Event",
          metadata: { name: "web.18a" },
          eventTime: ago(minutes(5)) + "",
          regarding: { kind: "Pod", name: "web", namespace: "default" },
          reason: "Scheduled",
          note: "Successfully assigned default/web to node-1",
          type: "Normal",
          reportingController: "default-scheduler",
          reportingInstance: "scheduler-1",
          action: "Binding"
        },
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data", creationTimestamp: ago(minutes(30)) },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: "fast",
            volumeName: "pv-1",
            volumeMode: "Filesystem",
            resources: { requests: { storage: "1Gi" } }
          },
          status: { phase: "Bound", accessModes: ["ReadWriteMany", "ReadWriteOnce"], capacity: { storage: "1024Mi" } }
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "reader", creationTimestamp: "2024-05-01T10:00:00Z" },
          rules: []
        }
      ]
    ))
})

const crontabs = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "crontabs.stable.example.com" },
  spec: {
    group: "stable.example.com",
    scope: "Namespaced",
    names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"] },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        additionalPrinterColumns: [
          { name: "Spec", type: "string", description: "The cron spec", jsonPath: ".spec.cronSpec" },
          { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
          { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" },
          { name: "Ratio", type: "number", jsonPath: ".spec.ratio", priority: 1 },
          { name: "Paused", type: "boolean", jsonPath: ".spec.paused" },
          { name: "Selector", type: "string", jsonPath: ".spec.selector" },
          { name: "Last", type: "date", jsonPath: ".status.lastRun" },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
        ]
      },
      {
        name: "v2",
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
      }
    ]
  }
}

describe("Tables: custom resources", () => {
  it.live("a CRD's additionalPrinterColumns, each cell of its column's type; a version without columns shows Age", () =>
    withCluster(
      Effect.gen(function*() {
        const table = yield* tableOf("/apis/stable.example.com/v1/namespaces/default/crontabs")
        assert.deepStrictEqual(
          table.columnDefinitions!.map((c) => [c.name, c.type, c.priority]),
          [
            ["Name", "string", 0],
            ["Spec", "string", 0],
            ["Replicas", "integer", 0],
            ["Ready", "string", 0],
            ["Ratio", "number", 1],
            ["Paused", "boolean", 0],
            ["Selector", "string", 0],
            ["Last", "date", 0],
            ["Age", "date", 0]
          ]
        )
        assert.strictEqual(table.columnDefinitions![1]!.description, "The cron spec")
        assert.strictEqual(
          table.columnDefinitions![2]!.description,
          "Custom resource definition column (in JSONPath format): {.spec.replicas}"
        )
        const rows = Object.fromEntries(table.rows.map((r) => [r.cells[0], r.cells]))
        assert.deepStrictEqual(rows["full"], [
          "full",
          "*/5 * * * *",
          2,
          "True",
          0.5,
          true,
          "{\"app\":\"cron\"}",
          "15m",
          "30m"
        ])
        // missing values and values of another type are null; an unreadable date is <invalid>
        assert.deepStrictEqual(rows["sparse"], ["sparse", null, null, null, null, null, null, "<invalid>", "30m"])
        const v2 = yield* tableOf("/apis/stable.example.com/v2/namespaces/default/crontabs")
        assert.deepStrictEqual(v2.columnDefinitions!.map((c) => [c.name, c.type]), [["Name", "string"], ["Age", "date"]])
        assert.deepStrictEqual(v2.rows.map((r) => r.cells), [["full", "30m"], ["sparse", "30m"]])
      }),
      [
        crontabs,
        {
          apiVersion: "stable.example.com/v1",
          kind: "CronTab",
          metadata: { name: "full", creationTimestamp: ago(minutes(30)) },
          spec: { cronSpec: "*/5 * * * *", replicas: 2, ratio: 0.5, paused: true, selector: { app: "cron" } },
          status: { conditions: [{ type: "Ready", status: "True" }], lastRun: ago(minutes(15)) }
        },
        {
          apiVersion: "stable.example.com/v1",
          kind: "CronTab",
          metadata: { name: "sparse", creationTimestamp: ago(minutes(30)) },
          spec: { replicas: "two", paused: "yes" },
          status: { lastRun: "yesterday" }
        }
      ]
    ))
})

describe("Tables: options and forms", () => {
  it.live("includeObject: Metadata by default, Object, None; an unknown value is 400; v1beta1 answers its version", () =>
    withCluster(
      Effect.gen(function*() {
        const path = "/api/v1/namespaces/default/configmaps/a"
        const one = yield* tableOf(path)
        assert.deepStrictEqual(one.metadata, { resourceVersion: one.rows[0]!.object.metadata.resourceVersion })
        assert.strictEqual(one.rows.length, 1)
        const whole = yield* tableOf(`${path}?includeObject=Object`)
        assert.strictEqual(whole.rows[0]!.object.kind, "ConfigMap")
        assert.deepStrictEqual(whole.rows[0]!.object.data, { k: "v" })
        const none = yield* tableOf(`${path}?includeObject=None`)
        // as kube-apiserver encodes a nil RawExtension
        assert.strictEqual(none.rows[0]!.object, null)
        const bad = yield* call("GET", `${path}?includeObject=All`, tableAccept)
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.message, `unrecognized includeObject value: "All"`)
        const beta = yield* tableOf(path, "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
        assert.strictEqual(beta.apiVersion, "meta.k8s.io/v1beta1")
        assert.strictEqual(beta.rows[0]!.object.apiVersion, "meta.k8s.io/v1beta1")
        // a list carries the list's resourceVersion and continue token
        const page = yield* tableOf("/api/v1/namespaces/default/configmaps?limit=1")
        assert.isString(page.metadata["resourceVersion"])
        assert.isString(page.metadata["continue"])
        // a write answers in the negotiated form too
        const patched = yield* call("PATCH", path, tableAccept, { data: { k: "w" } })
        assert.strictEqual(patched.body.kind, "Table")
        assert.deepStrictEqual(patched.body.rows[0].cells.slice(0, 2), ["a", 1])
      }),
      [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" }, data: {} }
      ]
    ))

  it.live("a watch asked as=Table answers Table events, the column definitions in the first only", () =>
    withCluster(
      Effect.gen(function*() {
        const cluster = yield* FakeCluster.FakeCluster
        const client = yield* HttpClient.HttpClient
        const response = yield* client.execute(
          HttpClientRequest.get(`${base}/api/v1/namespaces/default/pods?watch=true`).pipe(
            HttpClientRequest.setHeader("accept", tableAccept)
          )
        )
        const lines = response.stream.pipe(Stream.decodeText(), Stream.splitLines, Stream.take(3), Stream.runCollect)
        const collected = yield* Effect.forkChild(lines)
        yield* Effect.sleep("20 millis")
        cluster.seed([pod("b", { phase: "Pending" })])
        cluster.setPodPhase("default", "b", "Running")
        const events = [...yield* Fiber.join(collected)].map((l) => JSON.parse(l))
        assert.deepStrictEqual(events.map((e) => e.type), ["ADDED", "ADDED", "MODIFIED"])
        assert.isTrue(events.every((e) => e.object.kind === "Table" && e.object.rows.length === 1))
        assert.deepStrictEqual(events[0].object.columnDefinitions.map((c: Column) => c.name).slice(0, 5), [
          "Name",
          "Ready",
          "Status",
          "Restarts",
          "Age"
        ])
        assert.strictEqual(events[1].object.columnDefinitions, null)
        assert.strictEqual(events[2].object.columnDefinitions, null)
        assert.deepStrictEqual(events.map((e) => e.object.rows[0].cells.slice(0, 3)), [
          ["a", "0/1", "Pending"],
          ["b", "0/1", "Pending"],
          ["b", "1/1", "Running"]
        ])
        assert.strictEqual(events[2].object.metadata.resourceVersion, events[2].object.rows[0].object.metadata.resourceVersion)
      }).pipe(Effect.scoped),
      [pod("a", { phase: "Pending" })]
    ))
})

describe("406 Not Acceptable, as the API server's negotiation and transforms refuse", () => {
  it.live("PartialObjectMetadata of a list and PartialObjectMetadataList of an object; an Accept nothing answers", () =>
    withCluster(
      Effect.gen(function*() {
        const object = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        const list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        const listed = yield* call("GET", "/api/v1/namespaces/default/secrets", object)
        assert.strictEqual(listed.status, 406)
        assert.deepStrictEqual(listed.body, {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: "you requested PartialObjectMetadata, but the requested object is a list (*core.SecretList)",
          reason: "NotAcceptable",
          code: 406
        })
        const one = yield* call("GET", "/api/v1/namespaces/default/secrets/s", list)
        assert.strictEqual(one.status, 406)
        assert.strictEqual(
          one.body.message,
          "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Secret)"
        )
        const deployment = yield* call("GET", "/apis/apps/v1/namespaces/default/deployments", object)
        assert.include(deployment.body.message, "(*apps.DeploymentList)")
        const custom = yield* call("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs", object)
        assert.include(custom.body.message, "(*unstructured.UnstructuredList)")
        // the forms that fit still answer
        assert.strictEqual((yield* call("GET", "/api/v1/namespaces/default/secrets", list)).body.kind, "PartialObjectMetadataList")
        assert.strictEqual((yield* call("GET", "/api/v1/namespaces/default/secrets/s", object)).body.kind, "PartialObjectMetadata")
        // a missing object is the Status it is, whatever the form
        assert.strictEqual((yield* call("GET", "/api/v1/namespaces/default/secrets/nope", list)).status, 404)

        const html = yield* call("GET", "/api/v1/namespaces/default/secrets", "text/html")
        assert.strictEqual(html.status, 406)
        assert.strictEqual(
          html.body.message,
          "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        )
        const customHtml = yield* call("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs", "text/html")
        assert.strictEqual(customHtml.body.message, "only the following media types are accepted: application/json, application/yaml")
        // an unknown transform is passed over for the next entry
        const fallback = yield* call("GET", "/api/v1/namespaces/default/secrets", "application/json;as=Chart;g=meta.k8s.io;v=v1, application/json")
        assert.strictEqual(fallback.body.kind, "SecretList")
      }),
      [{ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: "AA==" } }, crontabs]
    ))
})
