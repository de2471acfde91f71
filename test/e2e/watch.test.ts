/**
 * Watches against the real control plane: raw watch events in order from a list's resourceVersion, the server ending
 * a watch at its timeout, the initial events of a streaming list (`sendInitialEvents`) closed by a bookmark, the 410
 * of a resourceVersion the watch cache no longer has, and the resilient `Watcher` and its reflector store.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schedule, Stream } from "effect"
import { inject } from "vitest"
import { ApiError, ConfigMaps, Kube } from "./lib.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { clusterDir, restartPiece } from "./setup/cluster.js"
import { layer, testNamespace } from "./support.js"

/** The cluster control of the run's own cluster (undefined for an outside one, which cannot be restarted). */
const clusterControl = (): string | undefined => inject("clusterControl")

/**
 * Compacts the run's own etcd at its current revision, through etcd's JSON gateway (its URL read from the
 * apiserver's flags in the cluster's log): what a long-running cluster does every 5 minutes, at once.
 */
const compactEtcd = async (): Promise<void> => {
  const log = fs.readFileSync(path.join(clusterDir() ?? "", "logs", "apiserver.log"), "utf8")
  const etcd = /--etcd-servers=(\S+)/.exec(log)?.[1]
  if (etcd === undefined) throw new Error("compactEtcd: no --etcd-servers in the apiserver's log")
  const status = await fetch(`${etcd}/v3/maintenance/status`, { method: "POST", body: "{}" })
  const revision = ((await status.json()) as { header: { revision: string } }).header.revision
  const compacted = await fetch(`${etcd}/v3/kv/compaction`, { method: "POST", body: JSON.stringify({ revision, physical: true }) })
  if (!compacted.ok) throw new Error(`compactEtcd: ${compacted.status} ${await compacted.text()}`)
}

it.layer(layer, { excludeTestServices: true, timeout: "60 seconds" })("watch", (it) => {
  it.effect("a watch from a list's resourceVersion sees ADDED, MODIFIED and DELETED in order", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("watch")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "before", labels: { w: "yes" } } })
      const { metadata } = yield* cms.list({ labelSelector: "w=yes" })
      const events = yield* Effect.forkChild(
        cms.watch({ labelSelector: "w=yes", resourceVersion: metadata.resourceVersion }).pipe(
          Stream.take(3),
          Stream.runCollect
        )
      )
      const created = yield* cms.create({ metadata: { name: "during", labels: { w: "yes" } }, data: { v: "1" } })
      const modified = yield* cms.update("during", (cm) => ({ ...cm, data: { v: "2" } }))
      yield* cms.delete("during")
      const seen = (yield* Fiber.join(events))
      assert.deepStrictEqual(seen.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"])
      const objects = seen.map((e) => e.type === "BOOKMARK" ? undefined : e.object)
      // "before" was in the list, so the watch from its resourceVersion does not repeat it
      assert.deepStrictEqual(objects.map((o) => o?.metadata?.name), ["during", "during", "during"])
      assert.strictEqual(objects[0]?.metadata?.resourceVersion, created.metadata?.resourceVersion)
      assert.strictEqual(objects[1]?.metadata?.resourceVersion, modified.metadata?.resourceVersion)
      assert.deepStrictEqual(objects[1]?.data, { v: "2" })
      assert.isTrue(Number(objects[2]?.metadata?.resourceVersion) > Number(modified.metadata?.resourceVersion))
    }), 60_000)

  it.effect("the server ends a watch at its timeoutSeconds, and the stream ends with it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("watch-timeout")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const started = Date.now()
      const events = yield* cms.watch({ labelSelector: "none=here", timeoutSeconds: 1 }).pipe(Stream.runCollect)
      assert.strictEqual(events.length, 0)
      const took = Date.now() - started
      assert.isAtLeast(took, 900)
      assert.isBelow(took, 15_000)
    }), 30_000)

  // kube-apiserver's watch cache sends a bookmark every minute, and one 2 s before a watch's timeout (a watch of 5 s
  // gets one at about 3 s), once it has seen its kind change since: ConfigMaps written in another namespace meanwhile
  it.effect("allowWatchBookmarks: the server's bookmark carries a resourceVersion a watch can resume from", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("bookmarks")
      const elsewhere = yield* testNamespace("bookmarks-noise")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      const created = yield* cms.create({ metadata: { name: "a" } })
      let written = 0
      yield* Effect.forkChild(
        Effect.suspend(() => Kube.api(ConfigMaps, { namespace: elsewhere }).create({ metadata: { name: `noise-${written++}` } }))
          .pipe(Effect.repeat(Schedule.spaced("400 millis")))
      )
      const events = yield* cms.watch({ allowWatchBookmarks: true, timeoutSeconds: 5, resourceVersion: created.metadata?.resourceVersion }).pipe(
        Stream.runCollect
      )
      const bookmark = events.find((e) => e.type === "BOOKMARK")
      assert.isDefined(bookmark, JSON.stringify(events.map((e) => e.type)))
      if (bookmark?.type === "BOOKMARK") {
        assert.isFalse(bookmark.initialEventsEnd)
        assert.isTrue(Number(bookmark.resourceVersion) >= Number(created.metadata?.resourceVersion))
        // a watch from the bookmark's resourceVersion sees what came after it, and only that
        const next = yield* Effect.forkChild(
          cms.watch({ resourceVersion: bookmark.resourceVersion }).pipe(Stream.take(1), Stream.runCollect)
        )
        yield* Effect.sleep("300 millis")
        yield* cms.create({ metadata: { name: "b" } })
        const [after] = yield* Fiber.join(next)
        assert.strictEqual(after?.type === "ADDED" ? after.object.metadata?.name : after?.type, "b")
      }
    }), 30_000)

  it.effect("sendInitialEvents: the objects there first, then a bookmark marking their end", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("watch-list")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "a", labels: { w: "yes" } } })
      yield* cms.create({ metadata: { name: "b", labels: { w: "yes" } } })
      const events = (
        yield* cms.watch({ labelSelector: "w=yes", sendInitialEvents: true }).pipe(
          Stream.takeUntil((e) => e.type === "BOOKMARK" && e.initialEventsEnd),
          Stream.runCollect
        )
      )
      const added = events.filter((e) => e.type === "ADDED").map((e) => e.type === "ADDED" ? e.object.metadata?.name : "")
      assert.deepStrictEqual([...added].sort(), ["a", "b"])
      const last = events[events.length - 1]
      assert.strictEqual(last?.type, "BOOKMARK")
      if (last?.type === "BOOKMARK") {
        assert.isTrue(last.initialEventsEnd)
        assert.match(last.resourceVersion, /^\d+$/)
      }
    }), 30_000)

  // A 410 needs a resourceVersion the server no longer has: the watch cache of a running kube-apiserver holds every
  // revision since it started (a watch from "1" replays them) and the e2e cluster's etcd compacts only what is older
  // than 5 minutes, so the 410 is forced by restarting kube-apiserver (see the restart test below); an outside
  // cluster skips it.

  it.effect("the Watcher lists, then follows; its reflector's store equals the cluster", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("watcher")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "one", labels: { w: "yes" } } })
      yield* cms.create({ metadata: { name: "two", labels: { w: "yes" } } })
      const listed = yield* Deferred.make<void>()
      const events = yield* Effect.forkChild(
        cms.watcher({ labelSelector: "w=yes", pageSize: 1 }).pipe(
          Stream.tap((e) => e._tag === "InitDone" ? Deferred.succeed(listed, undefined) : Effect.void),
          Stream.takeUntil((e) => e._tag === "Delete"),
          Stream.runCollect
        )
      )
      const store = yield* cms.reflector({ labelSelector: "w=yes" })
      yield* store.ready
      yield* Deferred.await(listed)
      assert.deepStrictEqual((yield* store.list()).map((c) => c.metadata?.name).sort(), ["one", "two"])
      yield* cms.create({ metadata: { name: "three", labels: { w: "yes" } } })
      yield* cms.update("one", (cm) => ({ ...cm, data: { changed: "yes" } }))
      yield* cms.delete("two")
      const seen = (yield* Fiber.join(events))
      const tags = seen.map((e) => e._tag)
      // Init, one InitApply per object (listed a page of one at a time), InitDone, then the changes in order
      assert.deepStrictEqual(tags.slice(0, 4), ["Init", "InitApply", "InitApply", "InitDone"])
      const changes = seen.slice(4).map((e) => "object" in e ? `${e._tag} ${e.object.metadata?.name}` : e._tag)
      assert.deepStrictEqual(changes, ["Apply three", "Apply one", "Delete two"])
      // the store follows the same changes
      const settled = yield* Effect.gen(function*() {
        for (let i = 0; i < 50; i++) {
          const names = (yield* store.list()).map((c) => c.metadata?.name).sort()
          if (names.join() === "one,three") return names
          yield* Effect.sleep("100 millis")
        }
        return (yield* store.list()).map((c) => c.metadata?.name).sort()
      })
      assert.deepStrictEqual(settled, ["one", "three"])
      assert.deepStrictEqual(Option.getOrThrow(yield* store.get("one", ns)).data, { changed: "yes" })
    }), 60_000)

  it.effect("waitFor watches from its read: a change made after it starts ends it", () =>
    Effect.gen(function*() {
      const ns = yield* testNamespace("waitfor")
      const cms = Kube.api(ConfigMaps, { namespace: ns })
      yield* cms.create({ metadata: { name: "flag" }, data: { ready: "no" } })
      const waiting = yield* Effect.forkChild(cms.waitFor("flag", (cm) => cm?.data?.ready === "yes", { timeout: "30 seconds" }))
      yield* Effect.sleep("300 millis")
      yield* cms.update("flag", (cm) => ({ ...cm, data: { ready: "yes" } }))
      const found = yield* Fiber.join(waiting)
      assert.strictEqual(Option.getOrThrow(found).data?.ready, "yes")
    }), 60_000)

  it.effect.skipIf(clusterControl() === undefined)(
    "across etcd's compaction and a restart of kube-apiserver: a watch and a continue token from before are 410 Expired, a reflector's store follows on",
    () =>
      Effect.gen(function*() {
        const ns = yield* testNamespace("restart")
        const cms = Kube.api(ConfigMaps, { namespace: ns })
        yield* cms.create({ metadata: { name: "before", labels: { r: "yes" } } })
        const store = yield* cms.reflector({ labelSelector: "r=yes" })
        yield* store.ready
        const before = yield* cms.list()
        const page = yield* cms.list({ labelSelector: "r=yes", limit: 1 })
        yield* cms.create({ metadata: { name: "second", labels: { r: "yes" } } })
        // etcd compacted at its current revision, then the apiserver restarted: kube-apiserver 1.35 serves a
        // continued list from its watch cache's snapshots, which a compaction alone does not expire
        yield* Effect.promise(() => compactEtcd())
        yield* Effect.promise(() => restartPiece("apiserver"))
        // the new watch cache starts at the current revision: a watch from one before it is 410 Expired
        // (a refused connection while it comes back is tried again)
        const gone = yield* cms.watch({ resourceVersion: before.metadata.resourceVersion }).pipe(
          Stream.runDrain,
          Effect.timeout("20 seconds"),
          Effect.retry({ schedule: Schedule.spaced("500 millis"), times: 20, while: (e) => !ApiError.isGone(e) }),
          Effect.flip
        )
        assert.isTrue(ApiError.isGone(gone), String(gone))
        assert.strictEqual((gone as ApiError).code, 410)
        assert.include((gone as ApiError).message, "too old resource version")
        const expired = yield* Effect.flip(cms.list({ labelSelector: "r=yes", limit: 1, continue: page.metadata.continue }))
        assert.isTrue(ApiError.isGone(expired), String(expired))
        assert.include((expired as ApiError).message, "The provided continue parameter is too old to display a consistent list result")
        yield* cms.delete("second")
        yield* cms.create({ metadata: { name: "after", labels: { r: "yes" } } }).pipe(
          Effect.retry({ schedule: Schedule.spaced("500 millis"), times: 20 })
        )
        yield* cms.delete("before")
        const names = yield* Effect.gen(function*() {
          for (let i = 0; i < 100; i++) {
            const now = (yield* store.list()).map((c) => c.metadata?.name).sort()
            if (now.join() === "after") return now
            yield* Effect.sleep("200 millis")
          }
          return (yield* store.list()).map((c) => c.metadata?.name).sort()
        })
        assert.deepStrictEqual(names, ["after"])
        assert.isTrue(Option.isNone(yield* store.failure))
      }),
    90_000
  )
})
