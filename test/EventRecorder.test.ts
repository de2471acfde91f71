import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as EventRecorder from "../packages/effect-kube/src/EventRecorder.js"
import { EventsEventsV1 as EventsV1 } from "../packages/effect-kube/src/resources/index.js"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import { ConfigMaps } from "../packages/effect-kube/src/resources/index.js"
import { FakeCluster } from "@effect-kube/testing"

const events = Kube.api(EventsV1, { namespace: "default" })
const microTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

describe("EventRecorder", () => {
  it.effect("records events.k8s.io Events; repeats within the window become a series, not a flood", () =>
    Effect.gen(function*() {
      const cluster = yield* FakeCluster.FakeCluster
      const [cm] = cluster.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web" } }])
      const regarding = EventRecorder.reference(ConfigMaps, cm)
      const recorder = yield* EventRecorder.make({ reportingController: "example.com/test", reportingInstance: "pod-1" })
      yield* TestClock.setTime(Date.UTC(2030, 0, 1))
      yield* recorder.normal(regarding, "Synced", "all good")
      let list = (yield* events.list()).items
      assert.strictEqual(list.length, 1)
      const first = list[0]!
      assert.strictEqual(first.eventTime, "2030-01-01T00:00:00.000000Z")
      assert.strictEqual(first.series, undefined)
      assert.deepStrictEqual(
        [first.type, first.reason, first.note, first.action, first.reportingController, first.reportingInstance],
        ["Normal", "Synced", "all good", "Reconcile", "example.com/test", "pod-1"]
      )
      assert.deepStrictEqual(first.regarding, {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "web",
        namespace: "default",
        uid: (cm!.metadata as { uid: string }).uid,
        resourceVersion: (cm!.metadata as { resourceVersion: string }).resourceVersion
      })
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("10 seconds")
        yield* recorder.normal(regarding, "Synced", "all good")
      }
      list = (yield* events.list()).items
      assert.strictEqual(list.length, 1)
      assert.strictEqual(list[0]!.series?.count, 6)
      assert.strictEqual(list[0]!.series?.lastObservedTime, "2030-01-01T00:00:50.000000Z")
      assert.match(list[0]!.series!.lastObservedTime ?? "", microTime)
      // another reason is another event; the same one after the window is a new event
      yield* recorder.warning(regarding, "Failed", "oops")
      yield* TestClock.adjust("7 minutes")
      yield* recorder.normal(regarding, "Synced", "all good")
      list = (yield* events.list()).items
      assert.strictEqual(list.length, 3)
      assert.deepStrictEqual(list.map((e) => e.type).sort(), ["Normal", "Normal", "Warning"])
      // best effort: a failure to write is logged, never returned
      cluster.failNext({ status: 500, match: (method) => method === "POST" })
      yield* recorder.warning(regarding, "Other", "lost")
      assert.strictEqual((yield* events.list()).items.length, 3)
    }).pipe(Effect.provide(FakeCluster.layer())))
})
