/**
 * Realistic pods for the benchmarks: what a Deployment's pods look like when read back
 * from a real cluster (owner reference, several containers with env, ports, resources,
 * probes and volume mounts, projected service-account volume, tolerations, status
 * conditions and container statuses). Deterministic: pod `i` is always the same, so
 * every client decodes the same bytes.
 *
 * Each pod serializes to 2-4 KB of JSON (checked by `sizes`).
 */

const apps = ["checkout", "payments", "catalog", "search", "gateway", "auth", "orders", "inventory"] as const

const hex = (i: number, length: number): string => {
  let out = ""
  let x = (i * 2654435761) >>> 0
  while (out.length < length) {
    x = (x * 1103515245 + 12345) >>> 0
    out += (x >>> 8).toString(16).padStart(6, "0")
  }
  return out.slice(0, length)
}

const uid = (i: number): string => {
  const h = hex(i + 7, 32)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const time = (i: number, offsetSeconds = 0): string =>
  new Date(Date.UTC(2025, 0, 1) + (i * 37 + offsetSeconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

const common = (app: string, i: number, name: string) => ({
  name,
  image: `registry.example.com/${app}/${name}:1.${i % 17}.${i % 5}`,
  imagePullPolicy: "IfNotPresent",
  terminationMessagePolicy: "File"
})

const serviceAccountMount = {
  name: "kube-api-access",
  mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
  readOnly: true
}

/** The main container: env (plain and from references), a port, resources, a probe, two mounts. */
const appContainer = (app: string, i: number) => ({
  ...common(app, i, "app"),
  ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
  env: [
    { name: "LOG_LEVEL", value: i % 3 === 0 ? "debug" : "info" },
    { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    { name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: `${app}-db`, key: "password" } } }
  ],
  resources: { limits: { cpu: "500m", memory: "512Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
  readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 10 },
  volumeMounts: [{ name: "config", mountPath: "/etc/app", readOnly: true }, serviceAccountMount]
})

/** A metrics sidecar: smaller, as sidecars are. */
const sidecarContainer = (app: string, i: number) => ({
  ...common(app, i, "metrics"),
  ports: [{ name: "metrics", containerPort: 9090, protocol: "TCP" }],
  env: [{ name: "TARGET", value: "localhost:8080" }],
  resources: { requests: { cpu: "10m", memory: "32Mi" } },
  volumeMounts: [serviceAccountMount]
})

const containerStatus = (app: string, i: number, name: string) => ({
  name,
  ready: true,
  restartCount: i % 4,
  image: `registry.example.com/${app}/${name}:1.${i % 17}.${i % 5}`,
  imageID: `registry.example.com/${app}/${name}@sha256:${hex(i + name.length, 64)}`,
  containerID: `containerd://${hex(i * 3 + name.length, 64)}`,
  started: true,
  state: { running: { startedAt: time(i, 12) } },
  lastState: {}
})

/** Pod number `i` of namespace `namespace`. */
export const pod = (i: number, namespace = "bench"): Record<string, unknown> => {
  const app = apps[i % apps.length]!
  const hash = hex(i % 64, 10)
  const name = `${app}-${hash}-${hex(i, 5)}`
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      generateName: `${app}-${hash}-`,
      namespace,
      uid: uid(i),
      resourceVersion: String(1000 + i),
      creationTimestamp: time(i),
      labels: { app, "pod-template-hash": hash, tier: "backend" },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: `${app}-${hash}`,
        uid: uid(i % 64 + 100000),
        controller: true,
        blockOwnerDeletion: true
      }]
    },
    spec: {
      containers: [appContainer(app, i), sidecarContainer(app, i)],
      volumes: [
        { name: "config", configMap: { name: `${app}-config`, defaultMode: 420 } },
        {
          name: "kube-api-access",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }
            ]
          }
        }
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: app,
      serviceAccount: app,
      nodeName: `node-${i % 40}`,
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }
      ],
      priority: 0
    },
    status: {
      phase: "Running",
      conditions: ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((
        type,
        k
      ) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: time(i, k * 3) })),
      hostIP: `10.0.${i % 40}.10`,
      podIP: `10.244.${(i >> 8) & 255}.${i & 255}`,
      podIPs: [{ ip: `10.244.${(i >> 8) & 255}.${i & 255}` }],
      startTime: time(i, 1),
      containerStatuses: [containerStatus(app, i, "app"), containerStatus(app, i, "metrics")],
      qosClass: "Burstable"
    }
  }
}

/** `count` pods. */
export const pods = (count: number, namespace = "bench"): Array<Record<string, unknown>> =>
  Array.from({ length: count }, (_, i) => pod(i, namespace))

/** The smallest, median and largest JSON size in bytes of the given pods. */
export const sizes = (objects: ReadonlyArray<unknown>): { min: number; median: number; max: number } => {
  const lengths = objects.map((o) => Buffer.byteLength(JSON.stringify(o))).sort((a, b) => a - b)
  return { min: lengths[0] ?? 0, median: lengths[Math.floor(lengths.length / 2)] ?? 0, max: lengths.at(-1) ?? 0 }
}
