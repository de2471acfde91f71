/**
 * `bench/server.ts` in a process of its own, for the harnesses that need one server for a
 * while (cold start, bundle): the process, and its ready line once it is listening.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { ServerConfig, ServerReady } from "./server.js"

const here = Path.dirname(fileURLToPath(import.meta.url))

/** Starts the server; the caller kills it. */
export const spawnServer = (config: ServerConfig): ChildProcess =>
  spawn(process.execPath, ["--import", "tsx", Path.join(here, "server.ts"), JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"]
  })

/** The server's first line (its URLs, kubeconfigs and pod names), or a failure if it exits first. */
export const serverReady = (server: ChildProcess): Promise<ServerReady> =>
  new Promise<ServerReady>((resolve, reject) => {
    let out = ""
    server.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const newline = out.indexOf("\n")
      if (newline !== -1) resolve(JSON.parse(out.slice(0, newline)) as ServerReady)
    })
    server.on("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })
