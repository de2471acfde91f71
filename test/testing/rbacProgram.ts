/**
 * A small program whose least-privilege RBAC `Rbac.required` writes from a fake run, and
 * which then runs with exactly that on the fake (RBAC enforced) and on the real control
 * plane (as a service account): namespaced creates, named gets, patches and deletes, a
 * server-side apply that creates, a watch by name, a list by label, a subresource and a
 * cluster-wide list.
 */
import { Effect, Stream } from "effect"
import { ConfigMaps, Deployments, Kube, Namespaces, Patch, Pods, Secrets } from "effect-kube"

export const program = (ns: string) =>
  Effect.gen(function*() {
    const configMaps = Kube.api(ConfigMaps, { namespace: ns })
    yield* configMaps.create({ metadata: { name: "settings" }, data: { mode: "a" } })
    yield* configMaps.getOrFail("settings")
    yield* configMaps.patch("settings", Patch.merge({ data: { mode: "b" } }))
    yield* configMaps.apply(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied" }, data: { a: "b" } },
      { fieldManager: "rbac-program" }
    )
    // the first event of a watch by name is the object as it is
    yield* configMaps.watch({ fieldSelector: "metadata.name=settings" }).pipe(Stream.take(1), Stream.runDrain)
    yield* Kube.api(Secrets, { namespace: ns }).get("absent")
    yield* Kube.api(Pods, { namespace: ns }).list({ labelSelector: "app=web" })
    yield* Kube.api(Namespaces).list()
    yield* Kube.api(Deployments, { namespace: ns }).create({
      metadata: { name: "web" },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } }
      }
    })
    yield* Kube.api(Deployments, { namespace: ns }).getScale("web")
    yield* configMaps.delete("settings")
  })

/** Removes what the program made, as the admin, so that it can run again. */
export const cleanup = (ns: string) =>
  Effect.all([
    Effect.ignore(Kube.api(ConfigMaps, { namespace: ns }).delete("settings")),
    Effect.ignore(Kube.api(ConfigMaps, { namespace: ns }).delete("applied")),
    Effect.ignore(Kube.api(Deployments, { namespace: ns }).delete("web"))
  ])
