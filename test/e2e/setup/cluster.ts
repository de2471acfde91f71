/**
 * What an e2e test knows of the run's cluster (see ./globalSetup.ts), and the control
 * of its pieces: stop, kill or restart the apiserver, etcd, the controller-manager,
 * the scheduler or the node stand-in alone, the rest left running.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { inject } from "vitest"

/** The admin kubeconfig (client certificate in group system:masters). */
export const kubeconfigPath = (): string => inject("kubeconfig")

/** kubectl v1.35 (the cluster's own binary, called through a link named kubectl). */
export const kubectlPath = (): string => inject("kubectl")

/** The cluster's folder (logs/<piece>.log, pki/, *.kubeconfig), undefined for an outside cluster. */
export const clusterDir = (): string | undefined => inject("clusterDir")

const run = promisify(execFile)

/** Runs kubectl against the run's cluster (input on its stdin); resolves with its stdout, rejects on a non-zero exit. */
export const kubectl = async (args: ReadonlyArray<string>, options?: { readonly input?: string }): Promise<string> => {
  const p = run(kubectlPath(), [...args], {
    env: { ...process.env, KUBECONFIG: kubeconfigPath() },
    timeout: 60_000,
    maxBuffer: 64 << 20
  })
  // stdin is the input, or closed at once (so a kubectl that reads it ends)
  p.child.stdin?.end(options?.input ?? "")
  return (await p).stdout
}

export type Piece = "etcd" | "apiserver" | "controller-manager" | "scheduler" | "nodes"

const control = async (verb: "stop" | "start" | "restart", piece: Piece, signal?: "TERM" | "KILL"): Promise<void> => {
  const base = inject("clusterControl")
  if (base === undefined) throw new Error(`cluster control: not available for an outside cluster (${verb} ${piece})`)
  const url = `${base}/${verb}?component=${piece}${signal ? `&signal=${signal}` : ""}`
  const res = await fetch(url, { method: "POST", signal: AbortSignal.timeout(90_000) })
  if (!res.ok) throw new Error(`cluster control: ${verb} ${piece}: ${res.status} ${await res.text()}`)
}

/** Stops one piece (SIGTERM, or SIGKILL with signal "KILL") and waits until its process is gone. */
export const stopPiece = (piece: Piece, signal?: "TERM" | "KILL"): Promise<void> => control("stop", piece, signal)

/** Starts a stopped piece again with the same flags and waits until it is ready. */
export const startPiece = (piece: Piece): Promise<void> => control("start", piece)

/** Stops then starts one piece; resolves once it is ready again. */
export const restartPiece = (piece: Piece, signal?: "TERM" | "KILL"): Promise<void> =>
  control("restart", piece, signal)

/** Which pieces run, with their pids. */
export const pieces = async (): Promise<Record<Piece, { readonly pid: number; readonly running: boolean }>> => {
  const base = inject("clusterControl")
  if (base === undefined) throw new Error("cluster control: not available for an outside cluster")
  const res = await fetch(`${base}/status`, { signal: AbortSignal.timeout(10_000) })
  return (await res.json()) as Record<Piece, { readonly pid: number; readonly running: boolean }>
}
