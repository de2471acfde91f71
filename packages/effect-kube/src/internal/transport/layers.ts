/**
 * What every runtime module (`NodeKube`, `BunKube`, `DenoKube`) builds its layers from,
 * written once: the platform services the kubeconfig loaders use (`KubeConfig.Platform`),
 * from @effect/platform-node-shared: Node's file system, paths and child processes (Bun and
 * Deno run the same layers through their Node compatibility); and the three ready-made
 * layers, from the module's own `layerFromKubeConfig` (its transport over a `KubeConfig`
 * layer), which each module exports with its own TSDoc.
 *
 * @internal
 */
import * as NodeChildProcessSpawner from "@effect/platform-node-shared/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import * as NodePath from "@effect/platform-node-shared/NodePath"
import type * as FileSystem from "effect/FileSystem"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type { KubeConfigError } from "../../Errors.js"
import * as KubeConfig from "../../KubeConfig.js"

/** `FileSystem | Path | ChildProcessSpawner`, as `KubeConfig.Platform`. @internal */
export const layer: Layer.Layer<FileSystem.FileSystem | Path.Path | ChildProcessSpawner.ChildProcessSpawner> = Layer
  .provideMerge(NodeChildProcessSpawner.layer, Layer.merge(NodeFileSystem.layer, NodePath.layer))

/** Both services a runtime layer gives. @internal */
export type Services = KubeConfig.KubeConfig | HttpClient.HttpClient

/** A runtime's default, kubeconfig-file and in-cluster layers. @internal */
export interface RuntimeLayers {
  /** In a pod its service account, elsewhere the kubeconfig kubectl would use. */
  readonly layer: Layer.Layer<Services, KubeConfigError>
  /** A kubeconfig file (or path list) and context. */
  readonly layerFromFile: (options?: KubeConfig.FileOptions) => Layer.Layer<Services, KubeConfigError>
  /** The pod's own service account. */
  readonly layerInCluster: Layer.Layer<Services, KubeConfigError>
}

/** The three layers from a runtime's `layerFromKubeConfig`. @internal */
export const runtimeLayers = (
  layerFromKubeConfig: (
    kubeConfig: Layer.Layer<KubeConfig.KubeConfig, KubeConfigError, KubeConfig.Platform>
  ) => Layer.Layer<Services, KubeConfigError>
): RuntimeLayers => ({
  layer: layerFromKubeConfig(KubeConfig.layer),
  layerFromFile: (options) => layerFromKubeConfig(KubeConfig.layerFromFile(options)),
  layerInCluster: layerFromKubeConfig(KubeConfig.layerInCluster)
})
