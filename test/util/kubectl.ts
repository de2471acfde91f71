/**
 * kubectl, the reference client, run against the fake cluster served on loopback. Tests
 * that need it skip themselves (saying why) where no working kubectl is on the PATH.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { FakeCluster } from "@effect-kube/testing"
import { pki } from "./pki.js"

/** `$KUBECTL`, else `kubectl` from the PATH. */
export const kubectlPath = process.env["KUBECTL"] ?? "kubectl"

/** Whether a kubectl that answers `version --client` is there. */
export const hasKubectl: boolean = (() => {
  try {
    execFileSync(kubectlPath, ["version", "--client"], { stdio: "ignore", timeout: 20_000 })
    return true
  } catch {
    return false
  }
})()

/** How a kubectl run ended: its exit code, stdout (bytes and text) and stderr. */
export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stdoutBytes: Buffer
  readonly stderr: string
}

/**
 * Runs kubectl without blocking the event loop (the fake answering it may live in this
 * process), with its own cache directory and HOME, stdin from a file when one is given.
 * Interrupting the effect kills kubectl.
 */
export const kubectl = (
  kubeconfig: string,
  cacheDir: string,
  args: ReadonlyArray<string>,
  stdinFile?: string,
  env: Readonly<Record<string, string>> = {}
): Effect.Effect<Run> =>
  Effect.callback<Run>((resume) => {
    const stdin = stdinFile === undefined ? "ignore" : Fs.openSync(stdinFile, "r")
    const child = spawn(
      kubectlPath,
      ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir, "--request-timeout", "20s", ...args],
      { stdio: [stdin, "pipe", "pipe"], env: { ...process.env, ...env, HOME: cacheDir } }
    )
    const timer = setTimeout(() => child.kill(), 60_000)
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout!.on("data", (d: Buffer) => out.push(d))
    child.stderr!.on("data", (d: Buffer) => err.push(d))
    child.on("close", (code) => {
      clearTimeout(timer)
      if (typeof stdin === "number") Fs.closeSync(stdin)
      const stdoutBytes = Buffer.concat(out)
      resume(Effect.succeed({
        code: code ?? -1,
        stdout: stdoutBytes.toString("utf8"),
        stdoutBytes,
        stderr: Buffer.concat(err).toString("utf8")
      }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill()
    })
  })

/** The stdout of a run that must have succeeded (the assertion names kubectl's stderr). */
export const ok = (run: Run): string => {
  assert.strictEqual(run.code, 0, `kubectl failed: ${run.stderr}`)
  return run.stdout
}

/** kubectl bound to one kubeconfig, with a scratch directory (its cache and HOME) removed with the scope. */
export interface Session {
  /** The scratch directory, for files to give kubectl. */
  readonly dir: string
  /** Runs kubectl with these arguments. */
  readonly run: (...args: ReadonlyArray<string>) => Effect.Effect<Run>
  /** Runs kubectl with these arguments and stdin from a file. */
  readonly runWithInput: (args: ReadonlyArray<string>, stdinFile?: string) => Effect.Effect<Run>
}

/**
 * A kubectl `Session` for a kubeconfig; `name` goes into the scratch directory's name, `env`
 * into kubectl's environment (`KUBECTL_APPLYSET=true`).
 */
export const session = (
  kubeconfig: string,
  name: string,
  env: Readonly<Record<string, string>> = {}
): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `effect-kube-${name}-`))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
    return {
      dir,
      run: (...args) => kubectl(kubeconfig, dir, args, undefined, env),
      runWithInput: (args, stdinFile) => kubectl(kubeconfig, dir, args, stdinFile, env)
    }
  })

/** A suite's name, saying why it is skipped where no working kubectl is there. */
export const suiteName = (name: string): string =>
  hasKubectl ? name : `${name} (skipped: no working kubectl at ${kubectlPath})`

/** FakeCluster served over HTTPS with a bearer token, as kubectl reaches a real cluster. */
export const serveWithToken = (): Effect.Effect<FakeCluster.Served, FakeCluster.FakeClusterError, Scope.Scope> => {
  const { ca, server } = pki()
  return FakeCluster.serve({ token: "kubectl-token", tls: { cert: server.cert, key: server.key, ca: ca.cert } })
}
