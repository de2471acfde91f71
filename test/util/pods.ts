/** Pod fixtures shared by the stream tests: a seedable pod in `default`, and its ref for the fake's controls. */

/** A pod as `FakeCluster` seeds it, labelled `app=web` unless told otherwise. */
export const pod = (name: string, labels: Record<string, string> = { app: "web" }) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", labels },
  spec: { containers: [{ name: "app", image: "busybox" }] }
})

/** The ref the fake's controls take for that pod. */
export const podRef = (name: string) => ({ apiVersion: "v1", kind: "Pod", name, namespace: "default" })
