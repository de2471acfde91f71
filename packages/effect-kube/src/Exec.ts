/**
 * Running commands in pods, attaching to them and forwarding their ports, over the
 * Kubernetes WebSocket channel protocol (`v5.channel.k8s.io`, falling back to
 * `v4.channel.k8s.io`). Same server, credentials and TLS material as every other
 * operation, from the `KubeConfig`; requirements `KubeConfig | HttpClient` like the rest
 * (`FakeCluster.layer` answers these in memory too).
 *
 * Long-lived channels are scoped: closing the scope closes the socket.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Exec, Kube, NodeKube, Pods } from "effect-kube"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 *
 * const program = Effect.gen(function* () {
 *   const { stdout, exitCode } = yield* Exec.exec(pods, "web-0", ["ls", "/"])
 *   const copy = yield* Exec.execOrFail(pods, "web-0", ["cat"], { stdin: "hello" }) // ExecFailed when non-zero
 *   yield* Effect.scoped(Effect.gen(function* () {
 *     const { port } = yield* Exec.portForwardListen(pods, "web-0", { port: 8080 }) // like kubectl port-forward
 *     console.log(`forwarding 127.0.0.1:${port}`)
 *     yield* Effect.never
 *   }))
 * })
 *
 * // against the cluster of your kubeconfig
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeKube.layer)))
 * ```
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/exec/session.js"
import type * as Kube from "./Kube.js"
import type * as Resource from "./Resource.js"

/**
 * Where the pod lives: a `Kube.api(Pods, ...)` value (its resource and namespace).
 * Only Pods serve exec, attach and port-forward; anything else fails with a
 * `ValidationError` before any connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly resource: Pick<Resource.Info, "apiVersion" | "kind" | "subresources">
  /** `undefined`: the KubeConfig's namespace. */
  readonly namespace: string | undefined
}

/**
 * The subprotocol agreed with the server. Under v4 stdin cannot be closed on its own, so
 * a command reading stdin to its end (`cat`) only ends when the connection does.
 *
 * @since 0.1.0
 * @category models
 */
export type Protocol = "v5.channel.k8s.io" | "v4.channel.k8s.io"

/**
 * Options of `exec` and `execOrFail`. `stdin` is sent in full, then closed (v5).
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecOptions {
  /** Required when the pod has more than one container. */
  readonly container?: string | undefined
  readonly stdin?: string | Uint8Array | Stream.Stream<Uint8Array> | undefined
  /** Run under a terminal: stderr is merged into stdout. */
  readonly tty?: boolean | undefined
}

/**
 * What a command left when it ended. A non-zero exit is data here; `execOrFail` makes it
 * an `ExecFailed` error.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecResult {
  readonly exitCode: number
  /** stdout decoded as UTF-8. */
  readonly stdout: string
  /** stderr decoded as UTF-8. */
  readonly stderr: string
  /** stdout byte for byte. */
  readonly stdoutBytes: Uint8Array
  readonly stderrBytes: Uint8Array
  readonly protocol: Protocol
}

/**
 * Options of `execStream` and `attach`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  readonly container?: string | undefined
  /** Whether a stdin channel is opened (default true). */
  readonly stdin?: boolean | undefined
  readonly tty?: boolean | undefined
}

/**
 * A running command (or an attached main process). Read `stdout` and `stderr` (each once)
 * and write stdin; `exit` waits for the exit code. Closing the scope closes the socket.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecStream {
  readonly protocol: Protocol
  /**
   * Ends when the command has ended; fails when the connection is lost. Read at your
   * pace: with a few MB unread, the connection stops reading (and the command blocks on
   * its output, as with a pipe), so read it before waiting for `exit`.
   */
  readonly stdout: Stream.Stream<Uint8Array, Kube.Error>
  /** Empty under a tty (stderr is merged into stdout). */
  readonly stderr: Stream.Stream<Uint8Array, Kube.Error>
  /** Writes everything it receives to stdin, then closes stdin. */
  readonly stdin: Sink.Sink<void, Uint8Array, never, Kube.Error>
  readonly write: (data: Uint8Array | string) => Effect.Effect<void, Kube.Error>
  /** Closes stdin (v5 only; a no-op under v4). */
  readonly end: Effect.Effect<void, Kube.Error>
  /** Tells the terminal its new size (tty only). */
  readonly resize: (columns: number, rows: number) => Effect.Effect<void, Kube.Error>
  /** The exit code, once the command has ended. */
  readonly exit: Effect.Effect<number, Kube.Error>
}

/**
 * One forwarded port of a pod: what the pod's port sends, and a way to send to it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PortForward {
  readonly port: number
  /** Ends when the connection is closed; fails with the server's error for this port. */
  readonly read: Stream.Stream<Uint8Array, Kube.Error>
  readonly write: (data: Uint8Array | string) => Effect.Effect<void, Kube.Error>
  readonly sink: Sink.Sink<void, Uint8Array, never, Kube.Error>
}

/**
 * Options of `portForwardListen`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenOptions {
  /** The pod's port. */
  readonly port: number
  /** The local port; 0 or absent picks a free one. */
  readonly localPort?: number | undefined
  /** The local address (default `127.0.0.1`). */
  readonly address?: string | undefined
}

/**
 * Where `portForwardListen` listens.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listener {
  readonly address: string
  readonly port: number
}

/**
 * A command exited non-zero (from `execOrFail`): its exit code and the end of its stderr.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecFailed extends Data.TaggedError("ExecFailed")<{
  readonly pod: string
  readonly command: ReadonlyArray<string>
  readonly exitCode: number
  /** The last 1000 characters of stderr (of stdout under a tty). */
  readonly stderrTail: string
}> {
  override get message(): string {
    const tail = this.stderrTail.trim()
    return `command ${JSON.stringify(this.command[0] ?? "")} in pod ${this.pod} exited with code ${this.exitCode}${
      tail === "" ? "" : `: ${tail}`
    }`
  }
}

/**
 * Runs a command to its end and returns its output and exit code. A non-zero exit code is
 * data (see `execOrFail`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Exec, Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * const web = {
 *   apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: "default" },
 *   spec: { containers: [{ name: "app", image: "busybox" }] }, status: { phase: "Running" }
 * }
 *
 * const program = Effect.gen(function* () {
 *   const fake = yield* FakeCluster.FakeCluster
 *   fake.seed([web])
 *   const hello = yield* Exec.exec(pods, "web-0", ["echo", "hello"], { container: "app" })
 *   assert.deepStrictEqual([hello.stdout, hello.exitCode], ["hello\n", 0])
 *   const copied = yield* Exec.exec(pods, "web-0", ["cat"], { stdin: "from stdin" })
 *   assert.strictEqual(copied.stdout, "from stdin")
 *   const failed = yield* Exec.exec(pods, "web-0", ["sh", "-c", "exit 3"]) // non-zero is data, not a failure
 *   assert.strictEqual(failed.exitCode, 3)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category exec
 */
export const exec: (
  pods: Target,
  name: string,
  command: ReadonlyArray<string>,
  options?: ExecOptions
) => Effect.Effect<ExecResult, Kube.Error, Kube.Requirements> = internal.exec

const tailLength = 1000

/**
 * Runs a command to its end; a non-zero exit fails with `ExecFailed`.
 *
 * @since 0.1.0
 * @category exec
 */
export const execOrFail = (
  pods: Target,
  name: string,
  command: ReadonlyArray<string>,
  options?: ExecOptions
): Effect.Effect<ExecResult, Kube.Error | ExecFailed, Kube.Requirements> =>
  Effect.flatMap(internal.exec(pods, name, command, options), (result) =>
    result.exitCode === 0
      ? Effect.succeed(result)
      : Effect.fail(
        new ExecFailed({
          pod: name,
          command,
          exitCode: result.exitCode,
          stderrTail: (options?.tty ? result.stdout : result.stderr).slice(-tailLength)
        })
      ))

/**
 * Starts a command and gives its streams; the socket lives as long as the scope.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Exec, Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * const web = {
 *   apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: "default" },
 *   spec: { containers: [{ name: "app", image: "busybox" }] }, status: { phase: "Running" }
 * }
 *
 * const program = Effect.gen(function* () {
 *   const fake = yield* FakeCluster.FakeCluster
 *   fake.seed([web])
 *   const { output, exitCode } = yield* Effect.scoped(Effect.gen(function* () {
 *     const cat = yield* Exec.execStream(pods, "web-0", ["cat"])
 *     yield* cat.write("line 1\n")
 *     yield* cat.write("line 2\n")
 *     yield* cat.end // closes stdin (v5), so cat ends
 *     const output = yield* cat.stdout.pipe(Stream.decodeText(), Stream.mkString)
 *     return { output, exitCode: yield* cat.exit }
 *   }))
 *   assert.deepStrictEqual([output, exitCode], ["line 1\nline 2\n", 0])
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category exec
 */
export const execStream: (
  pods: Target,
  name: string,
  command: ReadonlyArray<string>,
  options?: StreamOptions
) => Effect.Effect<ExecStream, Kube.Error, Kube.Requirements | Scope.Scope> = internal.execStream

/**
 * Attaches to a container's main process: the same shape as `execStream`.
 *
 * @since 0.1.0
 * @category exec
 */
export const attach: (
  pods: Target,
  name: string,
  options?: StreamOptions
) => Effect.Effect<ExecStream, Kube.Error, Kube.Requirements | Scope.Scope> = internal.attach

/**
 * Forwards one port of a pod (or several over one connection): a duplex byte stream
 * for each, for the scope's lifetime.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Exec, Kube, Pods } from "effect-kube"
 * import { FakeCluster } from "@effect-kube/testing"
 *
 * const pods = Kube.api(Pods, { namespace: "default" })
 * const web = {
 *   apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: "default" },
 *   spec: { containers: [{ name: "app", image: "busybox" }] }, status: { phase: "Running" }
 * }
 *
 * const program = Effect.gen(function* () {
 *   const fake = yield* FakeCluster.FakeCluster
 *   fake.seed([web])
 *   const answer = yield* Effect.scoped(Effect.gen(function* () {
 *     const [http] = yield* Exec.portForward(pods, "web-0", [8080]) // the fake's port handler echoes
 *     yield* http!.write("ping")
 *     return yield* http!.read.pipe(Stream.decodeText(), Stream.take(1), Stream.mkString)
 *   }))
 *   assert.strictEqual(answer, "ping")
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(FakeCluster.layer())))
 * ```
 * @since 0.1.0
 * @category port-forward
 */
export const portForward: (
  pods: Target,
  name: string,
  ports: ReadonlyArray<number>
) => Effect.Effect<ReadonlyArray<PortForward>, Kube.Error, Kube.Requirements | Scope.Scope> = internal.portForward

/**
 * Listens on a local TCP port and forwards each accepted connection to the pod's port
 * over its own WebSocket, as `kubectl port-forward` does. A failed connection ends only
 * itself; the listener stops with the scope.
 *
 * @since 0.1.0
 * @category port-forward
 */
export const portForwardListen: (
  pods: Target,
  name: string,
  options: ListenOptions
) => Effect.Effect<Listener, Kube.Error, Kube.Requirements | Scope.Scope> = internal.portForwardListen

/**
 * The operations of this module bound to one pods api: what `Kube.api(Pods)` offers
 * besides CRUD (kinds without the `exec` subresource do not get them).
 *
 * @since 0.1.0
 * @category models
 */
export interface Operations {
  /** Runs a command to its end; see `Exec.exec`. */
  readonly exec: (
    name: string,
    command: ReadonlyArray<string>,
    options?: ExecOptions
  ) => Effect.Effect<ExecResult, Kube.Error, Kube.Requirements>
  /** Runs a command to its end; a non-zero exit is `ExecFailed`. */
  readonly execOrFail: (
    name: string,
    command: ReadonlyArray<string>,
    options?: ExecOptions
  ) => Effect.Effect<ExecResult, Kube.Error | ExecFailed, Kube.Requirements>
  /** Starts a command and gives its streams for the scope's lifetime. */
  readonly execStream: (
    name: string,
    command: ReadonlyArray<string>,
    options?: StreamOptions
  ) => Effect.Effect<ExecStream, Kube.Error, Kube.Requirements | Scope.Scope>
  /** Attaches to a container's main process for the scope's lifetime. */
  readonly attach: (
    name: string,
    options?: StreamOptions
  ) => Effect.Effect<ExecStream, Kube.Error, Kube.Requirements | Scope.Scope>
  /** Forwards ports of a pod over one connection, for the scope's lifetime. */
  readonly portForward: (
    name: string,
    ports: ReadonlyArray<number>
  ) => Effect.Effect<ReadonlyArray<PortForward>, Kube.Error, Kube.Requirements | Scope.Scope>
  /** Listens locally and forwards each connection to a pod's port, for the scope's lifetime. */
  readonly portForwardListen: (
    name: string,
    options: ListenOptions
  ) => Effect.Effect<Listener, Kube.Error, Kube.Requirements | Scope.Scope>
}

/**
 * Binds the operations to a pods api.
 *
 * @since 0.1.0
 * @category constructors
 */
export const operations = (pods: Target): Operations => ({
  exec: (name, command, options) => exec(pods, name, command, options),
  execOrFail: (name, command, options) => execOrFail(pods, name, command, options),
  execStream: (name, command, options) => execStream(pods, name, command, options),
  attach: (name, options) => attach(pods, name, options),
  portForward: (name, ports) => portForward(pods, name, ports),
  portForwardListen: (name, options) => portForwardListen(pods, name, options)
})
