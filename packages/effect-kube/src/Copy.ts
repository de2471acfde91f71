/**
 * Copies files and folders to and from a container, as `kubectl cp` does: a tar archive
 * over exec, written and read by this library (no local `tar` needed), read and written
 * in the container by its own `tar`.
 *
 * - `toPod(pods, name, localPath, containerPath)` runs `tar -xmf - -C <dir>` in the
 *   container and sends the archive on its stdin. A folder is sent whole, symlinks inside
 *   it as symlinks (as kubectl); a `containerPath` ending in `/` is a folder the source goes
 *   into.
 * - `fromPod(pods, name, containerPath, localPath)` runs `tar cf - <path>` and unpacks its
 *   output here. Everything is written under a temporary name beside `localPath` and
 *   renamed into place at the end, so a copy that fails (tar missing or failing, a lost
 *   connection, a bad archive) leaves nothing behind. A member whose path leaves the
 *   target (`../`, an absolute path, outside the folder asked for) fails the copy with
 *   `CopyFailed` (`reason: "PathEscapes"`) before it is written anywhere; symlinks and hard
 *   links are not made here (a link could point a later member outside the target): they
 *   are listed in `skipped`, as kubectl warns of them. Into an existing folder, each copied
 *   member replaces the one of its name.
 *
 * An image without `tar` fails with `CopyFailed` (`reason: "NoTar"`); tar failing in the
 * container (a path that is not there, no permission) with `reason: "TarFailed"` and its
 * stderr; a local filesystem error with `reason: "Local"`. A container path with `..` is a
 * `ValidationError` before any connection. Needs `FileSystem` and `Path` besides the
 * client (`NodeKube.layerPlatform` on Node).
 *
 * @example
 * ```ts
 * import { Console, Effect, Layer } from "effect"
 * import { Copy, Kube, NodeKube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.gen(function*() {
 *   yield* Copy.toPod(pods, "web-0", "./site", "/usr/share/nginx/html", { container: "nginx" })
 *   const copied = yield* Copy.fromPod(pods, "web-0", "/var/log/nginx", "./logs")
 *   yield* Console.log(`${copied.files} files, ${copied.bytes} bytes; skipped ${copied.skipped.length}`)
 * })
 *
 * export const main = () =>
 *   Effect.runPromise(program.pipe(Effect.provide(Layer.merge(NodeKube.layer, NodeKube.layerPlatform))))
 * ```
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import type * as Exec from "./Exec.js"
import type * as Internal from "./internal/exec/copy.js"
import type * as Kube from "./Kube.js"

/**
 * Options of `toPod` and `fromPod`.
 *
 * @since 0.2.0
 * @category models
 */
export interface CopyOptions {
  /** The container (default: the pod's only one, or its default container). */
  readonly container?: string | undefined
}

/**
 * A member of the archive not copied, and why (symlinks and hard links from a container).
 *
 * @since 0.2.0
 * @category models
 */
export interface Skipped {
  readonly path: string
  readonly reason: string
}

/**
 * What a copy wrote: regular files, their bytes, and what it left out.
 *
 * @since 0.2.0
 * @category models
 */
export interface CopyResult {
  readonly files: number
  readonly bytes: number
  readonly skipped: ReadonlyArray<Skipped>
}

/**
 * Why a copy failed: `NoTar` (the image has no tar), `TarFailed` (the container's tar
 * exited non-zero), `PathEscapes` (a member of the archive would land outside the
 * target), `BadArchive` (the container's output is no tar archive), `Local` (the local
 * filesystem).
 *
 * @since 0.2.0
 * @category models
 */
export type CopyFailedReason = "NoTar" | "TarFailed" | "PathEscapes" | "BadArchive" | "Local"

/**
 * A copy that failed; nothing of it is left at the local destination.
 *
 * @example
 * ```ts
 * Effect.catchTag("CopyFailed", (e) => e.reason === "NoTar" ? Console.error("the image has no tar") : Effect.fail(e))
 * ```
 * @since 0.2.0
 * @category errors
 */
export class CopyFailed extends Data.TaggedError("CopyFailed")<{
  readonly pod: string
  readonly reason: CopyFailedReason
  /** The path concerned: the archive member, the local file, or the container path. */
  readonly path: string
  readonly detail: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `copy with pod ${this.pod}: ${this.path}: ${this.detail}`
  }
}

/**
 * What a copy needs: the client's services, and the local filesystem.
 *
 * @since 0.2.0
 * @category models
 */
export type Requirements = Kube.Requirements | FileSystem.FileSystem | Path.Path

/** The implementation (and the tar format), loaded by the first copy. */
const internal: Effect.Effect<typeof Internal> = Effect.promise(() => import("./internal/exec/copy.js"))

const publicError = <A, R>(
  run: (copy: typeof Internal) => Effect.Effect<A, Internal.CopyProblem | Kube.Error, R>
): Effect.Effect<A, CopyFailed | Kube.Error, R> => {
  const program: Effect.Effect<A, Internal.CopyProblem | Kube.Error, R> = Effect.flatMap(internal, run)
  return Effect.catchTag(program, "CopyProblem", (problem: Internal.CopyProblem) =>
    Effect.fail(
      new CopyFailed({
        pod: problem.pod,
        reason: problem.reason,
        path: problem.path,
        detail: problem.detail,
        cause: problem.cause
      })
    ))
}

/**
 * Copies a local file or folder into a container, as `kubectl cp LOCAL POD:PATH`.
 *
 * @since 0.2.0
 * @category exec
 */
export const toPod = (
  pods: Exec.Target,
  name: string,
  localPath: string,
  containerPath: string,
  options?: CopyOptions
): Effect.Effect<CopyResult, CopyFailed | Kube.Error, Requirements> =>
  publicError((copy) => copy.toPod(pods, name, localPath, containerPath, options))

/**
 * Copies a file or folder out of a container, as `kubectl cp POD:PATH LOCAL`; written under
 * a temporary name and renamed into place at the end.
 *
 * @since 0.2.0
 * @category exec
 */
export const fromPod = (
  pods: Exec.Target,
  name: string,
  containerPath: string,
  localPath: string,
  options?: CopyOptions
): Effect.Effect<CopyResult, CopyFailed | Kube.Error, Requirements> =>
  publicError((copy) => copy.fromPod(pods, name, containerPath, localPath, options))
