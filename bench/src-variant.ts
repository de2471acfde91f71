/**
 * A copy of `src` (this checkout's, or an older commit's unpacked inside it), or a build of it
 * (`dist/esm`), loaded on its own: the GET harnesses compare copies, each with one thing changed, in one process.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

/** `name=<src dir>` from the command line: a GET of `podName` in `default` through that copy's NodeKube layer. */
export const loadSrcVariant = async (
  spec: string,
  kubeconfig: string,
  podName: string
): Promise<{ readonly name: string; readonly get: () => Promise<unknown> }> => {
  const [name, src] = spec.split("=") as [string, string]
  // a build (dist/esm) has the same modules as .js files
  const ext = Fs.existsSync(Path.join(src, "Kube.ts")) ? ".ts" : ".js"
  const url = (file: string) => pathToFileURL(Path.join(Path.resolve(src), file + ext)).href
  const Kube = await import(url("Kube"))
  const NodeKube = await import(url("NodeKube"))
  const { Pods } = await import(url("resources/index"))
  const runtime = ManagedRuntime.make(NodeKube.layerFromFile({ path: kubeconfig }))
  await runtime.context()
  const pods = Kube.api(Pods, { namespace: "default" })
  const get = () =>
    runtime.runPromise(Effect.map(pods.get(podName) as Effect.Effect<Option.Option<unknown>>, Option.getOrThrow))
  return { name, get }
}
