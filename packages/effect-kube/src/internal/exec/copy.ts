/**
 * `kubectl cp` (k8s.io/kubectl/pkg/cmd/cp) over the library's exec: a tar archive written
 * here and read by the container's `tar -xmf -`, or written by its `tar cf -` and read here.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type { PlatformError } from "effect/PlatformError"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Copy from "../../Copy.js"
import { ApiError, ValidationError } from "../../Errors.js"
import * as Exec from "../../Exec.js"
import type * as Kube from "../../Kube.js"
import * as Tar from "./tar.js"

/** What `Copy` turns into its public `CopyFailed`. @internal */
export class CopyProblem extends Data.TaggedError("CopyProblem")<{
  readonly pod: string
  readonly reason: Copy.CopyFailedReason
  readonly path: string
  readonly detail: string
  readonly cause?: unknown
}> {}

/** @internal */
export type Requirements = Kube.Requirements | FileSystem.FileSystem | Path.Path

// ---------------------------------------------------------------------------
// container paths (POSIX, whatever the local system is)
// ---------------------------------------------------------------------------

const checkContainerPath = (pod: string, path: string): Effect.Effect<string, ValidationError> => {
  const subject = `copy with pod ${pod}: container path`
  if (path === "" || path.includes("\0")) {
    return Effect.fail(new ValidationError({ subject, detail: `must be a non-empty path; got ${JSON.stringify(path)}` }))
  }
  if (path.split("/").includes("..")) {
    return Effect.fail(new ValidationError({ subject, detail: `must not contain "..": ${path}` }))
  }
  return Effect.succeed(path)
}

/** `a/./b//c/` as `a/b/c`; undefined when `..` would climb above the start. */
const cleanRelative = (path: string): string | undefined => {
  const parts: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (parts.length === 0) return undefined
      parts.pop()
    } else parts.push(part)
  }
  return parts.join("/")
}

const posixDirname = (path: string): string => {
  const trimmed = path.replace(/\/+$/, "")
  const slash = trimmed.lastIndexOf("/")
  return slash === -1 ? "." : slash === 0 ? "/" : trimmed.slice(0, slash)
}

const posixBasename = (path: string): string => {
  const trimmed = path.replace(/\/+$/, "")
  return trimmed.slice(trimmed.lastIndexOf("/") + 1)
}

// ---------------------------------------------------------------------------
// failures
// ---------------------------------------------------------------------------

const tailLength = 1000

const isTarMissing = (error: unknown): boolean =>
  ApiError.is(error) && /executable file not found|no such file or directory|not found/i.test(error.statusMessage) &&
  /\btar\b/.test(error.statusMessage)

const local = (pod: string, path: string) => (cause: PlatformError) =>
  new CopyProblem({ pod, reason: "Local", path, detail: cause.message, cause })

/** The exit of the container's tar, as a failure when it did not succeed. */
const checkTar = (
  pod: string,
  path: string,
  exit: Exit.Exit<number, Kube.Error>,
  stderr: string
): Effect.Effect<void, CopyProblem | Kube.Error> => {
  if (Exit.isFailure(exit)) {
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (error !== undefined && error._tag === "Fail" && isTarMissing(error.error)) {
      return Effect.fail(
        new CopyProblem({ pod, reason: "NoTar", path, detail: "the container has no tar (copying needs tar in the image)", cause: error.error })
      )
    }
    return Effect.failCause(exit.cause)
  }
  const code = exit.value
  if (code === 0) return Effect.void
  // a shell or BusyBox reports a missing command itself: 127, "not found"
  if (code === 127 || code === 126 && /tar/.test(stderr)) {
    return Effect.fail(new CopyProblem({ pod, reason: "NoTar", path, detail: `the container has no tar (exit ${code}: ${stderr.trim().slice(-tailLength)})` }))
  }
  return Effect.fail(
    new CopyProblem({ pod, reason: "TarFailed", path, detail: `tar exited ${code}: ${stderr.trim().slice(-tailLength)}` })
  )
}

/**
 * Asked when a copy's exec lost its exit status: a command that never started (no tar) while the archive was still
 * being written makes the server close with our bytes unread, and the reset that follows can discard the status
 * frame already on its way. An exec without stdin has no writes to race with, so its answer says whether tar is
 * there; anything but "missing" keeps the first failure.
 */
const probeForTar = (
  pods: Exec.Target,
  pod: string,
  path: string,
  container: string | undefined
): Effect.Effect<Option.Option<CopyProblem>, never, Kube.Requirements> =>
  Exec.exec(pods, pod, ["tar", "--version"], { container }).pipe(
    Effect.exit,
    Effect.flatMap((probe) =>
      checkTar(pod, path, Exit.map(probe, (r) => r.exitCode), Exit.isSuccess(probe) ? probe.value.stderr : "").pipe(
        Effect.flip,
        Effect.map((problem) => problem instanceof CopyProblem && problem.reason === "NoTar" ? Option.some(problem) : Option.none()),
        Effect.orElseSucceed(() => Option.none())
      )
    )
  )

const collectText = (stream: Stream.Stream<Uint8Array, Kube.Error>) =>
  Stream.runFold(stream, () => "", (text, chunk) => (text + new TextDecoder().decode(chunk)).slice(-tailLength * 4))

// ---------------------------------------------------------------------------
// to a container
// ---------------------------------------------------------------------------

interface Planned {
  readonly local: string
  readonly header: Tar.Header
}

/** Walks the local tree first, so that a file that cannot be read fails before anything is sent. */
const walk = (
  pod: string,
  root: string,
  name: string
): Effect.Effect<ReadonlyArray<Planned>, CopyProblem, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const out: Array<Planned> = []
    const visit = (local: string, entry: string, follow: boolean): Effect.Effect<void, CopyProblem> =>
      Effect.gen(function*() {
        // the source itself is followed when it is a link (as kubectl's os.Stat); what is inside is not
        const info = yield* (follow ? fs.stat(local) : fs.lstat(local)).pipe(Effect.mapError(local_(local)))
        const mtime = Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() / 1000 })
        const base = { mode: info.mode, mtime, linkname: "" }
        if (info.type === "SymbolicLink") {
          const target = yield* fs.readLink(local).pipe(Effect.mapError(local_(local)))
          out.push({ local, header: { ...base, name: entry, type: "symlink", size: 0, linkname: target } })
        } else if (info.type === "Directory") {
          out.push({ local, header: { ...base, name: `${entry}/`, type: "directory", size: 0 } })
          const children = yield* fs.readDirectory(local).pipe(Effect.mapError(local_(local)))
          for (const child of children.sort()) yield* visit(path.join(local, child), `${entry}/${child}`, false)
        } else if (info.type === "File") {
          out.push({ local, header: { ...base, name: entry, type: "file", size: Number(info.size) } })
        }
        // sockets, FIFOs and devices are left out, as kubectl's tar writer leaves them
      })
    const local_ = (p: string) => local(pod, p)
    yield* visit(root, name, true)
    return out
  })

/** GNU tar reads in records of 20 blocks: an archive padded to one ends a reader that cannot see stdin close (v4). */
const recordSize = 20 * 512

/** @internal */
export const toPod = (
  pods: Exec.Target,
  pod: string,
  from: string,
  to: string,
  options: Copy.CopyOptions = {}
): Effect.Effect<Copy.CopyResult, CopyProblem | Kube.Error, Requirements> =>
  Effect.scoped(Effect.gen(function*() {
    yield* checkContainerPath(pod, to)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // kubectl: a destination ending in "/" is a folder the source goes into
    const destination = to.endsWith("/") ? `${to}${path.basename(from)}` : to
    const name = posixBasename(destination)
    const planned = yield* walk(pod, from, name)
    const shell = yield* Exec.execStream(pods, pod, ["tar", "-xmf", "-", "-C", posixDirname(destination)], {
      container: options.container,
      stdin: true
    })
    const stderr = yield* Effect.forkScoped(collectText(shell.stderr))
    const stdout = yield* Effect.forkScoped(Stream.runDrain(shell.stdout))
    let sent = 0
    let bytes = 0
    const send = (data: Uint8Array) => {
      sent += data.length
      return shell.write(data)
    }
    // a write failing means the command ended (tar missing, or it failed): its exit says why
    const feed = Effect.gen(function*() {
      for (const { header, local: file } of planned) {
        yield* send(Tar.header(header))
        if (header.type !== "file") continue
        let read = 0
        yield* fs.stream(file, { bytesToRead: header.size }).pipe(
          Stream.mapError(local(pod, file)),
          Stream.runForEach((chunk) => {
            read += chunk.length
            return send(chunk)
          })
        )
        // a file that shrank since the walk is padded to the size its header gave
        if (read < header.size) yield* send(new Uint8Array(header.size - read))
        bytes += header.size
        yield* send(Tar.padding(header.size))
      }
      yield* send(Tar.end())
      if (sent % recordSize !== 0) yield* send(new Uint8Array(recordSize - (sent % recordSize)))
      yield* shell.end
    })
    const fed = yield* Effect.exit(feed)
    // a local file that could not be read: stop here (closing the scope ends the container's tar)
    if (Exit.isFailure(fed) && fed.cause.reasons.some((r) => r._tag === "Fail" && r.error instanceof CopyProblem)) {
      return yield* Effect.failCause(fed.cause)
    }
    // a write that failed because the command ended: its exit says why
    const exit = yield* Effect.exit(shell.exit)
    const text = yield* Fiber.join(stderr).pipe(Effect.orElseSucceed(() => ""))
    yield* Effect.ignore(Fiber.join(stdout))
    if (Exit.isFailure(exit) && !exit.cause.reasons.some((r) => r._tag === "Fail" && ApiError.is(r.error))) {
      const noTar = yield* probeForTar(pods, pod, destination, options.container)
      if (Option.isSome(noTar)) return yield* Effect.fail(noTar.value)
    }
    yield* checkTar(pod, destination, exit, text)
    if (Exit.isFailure(fed)) return yield* Effect.failCause(fed.cause)
    const files = planned.filter((p) => p.header.type === "file").length
    return { files, bytes, skipped: [] }
  }))

// ---------------------------------------------------------------------------
// from a container
// ---------------------------------------------------------------------------

/** @internal */
export const fromPod = (
  pods: Exec.Target,
  pod: string,
  from: string,
  to: string,
  options: Copy.CopyOptions = {}
): Effect.Effect<Copy.CopyResult, CopyProblem | Kube.Error, Requirements> =>
  Effect.scoped(Effect.gen(function*() {
    yield* checkContainerPath(pod, from)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // tar names its members without the leading "/": the prefix every member must start with
    const prefix = cleanRelative(from) ?? ""
    const destination = path.resolve(to)
    const existing = yield* fs.stat(destination).pipe(Effect.option)
    const into = Option.isSome(existing) && existing.value.type === "Directory"
    // written beside the destination, so the rename at the end stays on one filesystem
    const temporary = path.join(path.dirname(destination), `.${path.basename(destination)}.effect-kube-cp-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`)
    const cleanup = Effect.ignore(fs.remove(temporary, { recursive: true }))
    const skipped: Array<Copy.Skipped> = []
    let files = 0
    let bytes = 0
    let rootIsFile = false

    const run = Effect.gen(function*() {
      const shell = yield* Exec.execStream(pods, pod, ["tar", "cf", "-", from], { container: options.container, stdin: false })
      const stderr = yield* Effect.forkScoped(collectText(shell.stderr))
      const reader = Tar.reader()
      let open: { readonly file: FileSystem.File; readonly scope: Scope.Closeable } | undefined
      let current = ""
      const targetOf = (member: string): Effect.Effect<string | undefined, CopyProblem> => {
        const name = member.replace(/\/+$/, "")
        const inside = name === prefix ? "" : prefix === "" ? name : name.startsWith(`${prefix}/`) ? name.slice(prefix.length + 1) : undefined
        const relative = inside === undefined || name.startsWith("/") ? undefined : cleanRelative(inside)
        if (relative === undefined || inside!.split("/").includes("..")) {
          return Effect.fail(new CopyProblem({ pod, reason: "PathEscapes", path: member, detail: `the archive's member ${JSON.stringify(member)} leaves ${to}` }))
        }
        return Effect.succeed(relative === "" ? temporary : path.join(temporary, ...relative.split("/")))
      }
      const onEvent = (event: Tar.Event) =>
        Effect.gen(function*() {
          if (event._tag === "Entry") {
            const { header } = event
            const target = yield* targetOf(header.name)
            if (target === undefined) return
            current = header.name
            if (header.type === "directory") {
              yield* fs.makeDirectory(target, { recursive: true }).pipe(Effect.mapError(local(pod, target)))
            } else if (header.type === "file") {
              if (target === temporary) rootIsFile = true
              else yield* fs.makeDirectory(path.dirname(target), { recursive: true }).pipe(Effect.mapError(local(pod, target)))
              const scope = yield* Scope.make()
              const file = yield* fs.open(target, { flag: "w", mode: header.mode & 0o777 || 0o644 }).pipe(
                Scope.provide(scope),
                Effect.mapError(local(pod, target))
              )
              open = { file, scope }
              files++
              bytes += header.size
            } else {
              // as kubectl: links are not followed nor made here (a link could point a later member outside)
              skipped.push({ path: header.name, reason: header.type === "symlink" ? `symlink to ${header.linkname}` : `${header.type} entry` })
            }
          } else if (event._tag === "Data") {
            if (open !== undefined) yield* open.file.writeAll(event.bytes).pipe(Effect.mapError(local(pod, current)))
          } else if (open !== undefined) {
            yield* Scope.close(open.scope, Exit.void)
            open = undefined
          }
        })
      const read = shell.stdout.pipe(
        Stream.runForEach((chunk) =>
          Effect.suspend(() => {
            let events: ReadonlyArray<Tar.Event>
            try {
              events = reader.push(chunk)
            } catch (e) {
              return Effect.fail(new CopyProblem({ pod, reason: "BadArchive", path: from, detail: (e as Error).message }))
            }
            return Effect.forEach(events, onEvent, { discard: true })
          })
        )
      )
      // a member refused, or output that is no archive: the copy stops here (closing the scope ends tar)
      yield* read.pipe(Effect.onError(() => open === undefined ? Effect.void : Scope.close(open.scope, Exit.void)))
      const exit = yield* Effect.exit(shell.exit)
      const text = yield* Fiber.join(stderr).pipe(Effect.orElseSucceed(() => ""))
      yield* checkTar(pod, from, exit, text)
      yield* Effect.try({
        try: () => reader.finish(),
        catch: (e) => new CopyProblem({ pod, reason: "BadArchive", path: from, detail: (e as Error).message })
      })
    })

    yield* run.pipe(Effect.onError(() => cleanup))
    // the last step: the whole copy appears at once
    const exists = yield* fs.exists(temporary).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return { files, bytes, skipped }
    const finish = Effect.gen(function*() {
      if (!into) return yield* fs.rename(temporary, destination)
      if (rootIsFile) return yield* fs.rename(temporary, path.join(destination, posixBasename(from)))
      // into a folder that is there: each member replaces the one of its name
      for (const child of yield* fs.readDirectory(temporary)) {
        const target = path.join(destination, child)
        yield* fs.remove(target, { recursive: true }).pipe(Effect.ignore)
        yield* fs.rename(path.join(temporary, child), target)
      }
      yield* fs.remove(temporary, { recursive: true })
    })
    yield* finish.pipe(Effect.mapError(local(pod, destination)), Effect.onError(() => cleanup))
    return { files, bytes, skipped }
  }))
