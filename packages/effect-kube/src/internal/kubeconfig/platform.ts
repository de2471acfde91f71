/**
 * The platform services the kubeconfig loaders use (`KubeConfig.Platform`), from
 * @effect/platform-node-shared: Node's file system, paths and child processes. Bun and
 * Deno run the same layers through their Node compatibility.
 *
 * @internal
 */
import * as NodeChildProcessSpawner from "@effect/platform-node-shared/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import * as NodePath from "@effect/platform-node-shared/NodePath"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"

/** `FileSystem | Path | ChildProcessSpawner`, as `KubeConfig.Platform`. @internal */
export const layer: Layer.Layer<FileSystem.FileSystem | Path.Path | ChildProcessSpawner.ChildProcessSpawner> = Layer
  .provideMerge(NodeChildProcessSpawner.layer, Layer.merge(NodeFileSystem.layer, NodePath.layer))
