/**
 * What the real server says about itself and answers in other shapes: `/version`, discovery (`Discovery`: kinds to
 * resources, verbs, short names, subresources, preferred versions), the metadata-only API (PartialObjectMetadata) and
 * server-side Tables, through `Kube.request` and `Kube.metadata`.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Option, Schema, Stream } from "effect"
import { ConfigMaps, Deployments, Discovery, Kube, Patch, Pods, Secrets, ValidationError } from "./lib.js"
import { layer, testNamespace } from "./support.js"

const Table = Schema.Struct({
  kind: Schema.Literal("Table"),
  apiVersion: Schema.Literal("meta.k8s.io/v1"),
  columnDefinitions: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })),
  rows: Schema.Array(Schema.Struct({ cells: Schema.Array(Schema.Unknown), object: Schema.Unknown }))
})

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("discovery", (it) => {
  it.effect("/version and discovery name the server and what it serves", () =>
    Effect.gen(function*() {
      const discovery = yield* Discovery.make
      const version = yield* discovery.serverVersion
      assert.match(version.gitVersion, /^v1\.35\.\d+/)
      assert.strictEqual(version.major, "1")
      assert.strictEqual(version.minor, "35")
      const raw = yield* Kube.request({ method: "GET", path: "/version" })
      assert.strictEqual((raw as { gitVersion?: string }).gitVersion, version.gitVersion)
      assert.strictEqual(yield* Kube.request({ method: "GET", path: "/readyz" }), "ok")

      const { groups, resources } = yield* discovery.resources()
      const find = (apiVersion: string, plural: string) =>
        resources.find((r) => r.apiVersion === apiVersion && r.plural === plural)
      const pods = find("v1", "pods")
      assert.strictEqual(pods?.kind, "Pod")
      assert.isTrue(pods?.namespaced)
      assert.includeMembers([...(pods?.shortNames ?? [])], ["po"])
      assert.includeMembers([...(pods?.subresources ?? [])], ["status", "log", "exec", "portforward", "eviction", "ephemeralcontainers", "resize", "binding", "attach", "proxy"])
      assert.includeMembers([...(pods?.verbs ?? [])], ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])
      const deployments = find("apps/v1", "deployments")
      assert.includeMembers([...(deployments?.subresources ?? [])], ["scale", "status"])
      assert.includeMembers([...(deployments?.categories ?? [])], ["all"])
      assert.isFalse(find("v1", "namespaces")?.namespaced)
      assert.isTrue(groups.some((g) => g.name === "apps" && g.preferredVersion === "v1"))
      assert.isTrue(groups.some((g) => g.name === "" && g.versions.includes("v1")))

      const leases = yield* discovery.resolve("coordination.k8s.io/v1", "Lease")
      assert.strictEqual(leases.plural, "leases")
      assert.isTrue(leases.namespaced)
      const unknown = yield* Effect.flip(discovery.resolve("example.com/v1", "Nothing"))
      assert.instanceOf(unknown, ValidationError)
    }), 30_000)

  it.effect("the metadata API answers PartialObjectMetadata: names, labels, owners, never data", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("metadata")
      yield* Kube.api(Secrets, { namespace: ns }).create({ metadata: { name: "tls", labels: { m: "yes" } }, stringData: { key: "hidden" } })
      yield* Kube.api(Secrets, { namespace: ns }).create({ metadata: { name: "other", labels: { m: "yes" } }, stringData: { key: "hidden" } })
      const secrets = Kube.metadata(Secrets, { namespace: ns })
      const one = Option.getOrThrow(yield* secrets.get("tls"))
      assert.strictEqual(one.kind, "PartialObjectMetadata")
      assert.strictEqual(one.apiVersion, "meta.k8s.io/v1")
      assert.strictEqual(one.metadata.name, "tls")
      assert.isUndefined((one as unknown as Record<string, unknown>)["data"])
      const listed = yield* secrets.list({ labelSelector: "m=yes" })
      assert.deepStrictEqual(listed.items.map((s) => s.metadata.name).sort(), ["other", "tls"])
      assert.isTrue(listed.items.every((s) => (s as unknown as Record<string, unknown>)["data"] === undefined))
      const paged = yield* secrets.listStream({ labelSelector: "m=yes", pageSize: 1 }).pipe(Stream.runCollect)
      assert.strictEqual(paged.length, 2)
      const patched = yield* secrets.patch("tls", Patch.merge({ metadata: { labels: { rotated: "true" } } }))
      assert.strictEqual(patched.metadata.labels?.["rotated"], "true")
      assert.isTrue(Option.isNone(yield* secrets.get("absent")))
      // a watch of metadata only
      const events = yield* Effect.forkChild(
        Kube.metadata(ConfigMaps, { namespace: ns }).watch({ labelSelector: "w=yes" }).pipe(Stream.take(1), Stream.runCollect)
      )
      yield* Effect.sleep("300 millis")
      yield* Kube.api(ConfigMaps, { namespace: ns }).create({ metadata: { name: "seen", labels: { w: "yes" } }, data: { big: "x" } })
      const [event] = yield* Fiber.join(events)
      assert.strictEqual(event?.type, "ADDED")
      if (event?.type === "ADDED") {
        assert.strictEqual(event.object.kind, "PartialObjectMetadata")
        assert.strictEqual(event.object.metadata.name, "seen")
      }
    }), 30_000)

  it.effect("Tables: the server's own columns and cells, as kubectl get prints them", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("tables")
      yield* Kube.api(Deployments, { namespace: ns }).create({
        metadata: { name: "web" },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } }
        }
      })
      yield* Kube.api(Pods, { namespace: ns }).create({ metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "busybox:1.36" }] } })
      const table = yield* Kube.request({
        method: "GET",
        path: `/apis/apps/v1/namespaces/${ns}/deployments`,
        accept: "application/json;as=Table;g=meta.k8s.io;v=v1"
      }).pipe(Effect.flatMap(Schema.decodeUnknownEffect(Table)))
      assert.deepStrictEqual(table.columnDefinitions.map((c) => c.name), [
        "Name",
        "Ready",
        "Up-to-date",
        "Available",
        "Age",
        "Containers",
        "Images",
        "Selector"
      ])
      assert.strictEqual(table.rows.length, 1)
      assert.deepStrictEqual(table.rows[0]?.cells.slice(0, 4), ["web", "0/0", 0, 0])
      // the object of a row is PartialObjectMetadata unless asked otherwise
      assert.strictEqual((table.rows[0]?.object as { kind?: string }).kind, "PartialObjectMetadata")
      const pods = yield* Kube.request({
        method: "GET",
        path: `/api/v1/namespaces/${ns}/pods`,
        query: { includeObject: "None" },
        accept: "application/json;as=Table;g=meta.k8s.io;v=v1"
      }).pipe(Effect.flatMap(Schema.decodeUnknownEffect(Table)))
      assert.deepStrictEqual(pods.columnDefinitions.map((c) => c.name).slice(0, 5), ["Name", "Ready", "Status", "Restarts", "Age"])
      assert.strictEqual(pods.rows[0]?.cells[0], "p")
      // Found here: a query parameter the library does not show in errors (includeObject) was sent as "<redacted>",
      // which the server refused; sent as given, None leaves the object out of the row
      assert.isTrue(pods.rows[0]?.object == null, JSON.stringify(pods.rows[0]?.object))
    }), 30_000)
})
