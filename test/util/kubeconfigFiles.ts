/**
 * Kubeconfig files on disk for the tests of KubeConfig and its loader: a temporary folder, a file
 * written into it, a one-context kubeconfig, and the token a loaded kubeconfig hands out.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import type * as KubeConfig from "../../packages/effect-kube/src/KubeConfig.js"

/** A temporary folder, removed with the scope. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-kube-config-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** Writes `content` (text, or an object as YAML) to `path`, making its folders; answers the path. */
export const write = (path: string, content: string | object): string => {
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.writeFileSync(path, typeof content === "string" ? content : Yaml.stringify(content))
  return path
}

/** The bearer token the kubeconfig's auth provider answers now, if any. */
export const token = (service: KubeConfig.Service) =>
  Effect.map(service.auth.credentials, (c) => (c.token === undefined ? undefined : Redacted.value(c.token)))

/** A minimal one-context kubeconfig with the given user. */
export const single = (user: object, cluster: object = { server: "https://127.0.0.1:6443" }) => ({
  apiVersion: "v1",
  kind: "Config",
  "current-context": "ctx",
  clusters: [{ name: "c", cluster }],
  users: [{ name: "u", user }],
  contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }]
})
