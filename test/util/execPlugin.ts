/**
 * A real exec credential plugin for tests: a small Node script, executable, that counts
 * its runs in its state directory, records what it was given (args and
 * `KUBERNETES_EXEC_INFO`) per run, and prints an ExecCredential. Its behaviour is
 * steered by env entries in the kubeconfig's `exec.env`:
 *
 * - `PLUGIN_STATE_DIR` (required): where `count` and `call-<n>.json` are written.
 * - `PLUGIN_EXPIRES`: sets `status.expirationTimestamp`.
 * - `PLUGIN_CERT_FILE` / `PLUGIN_KEY_FILE`: print that certificate and key (read at each
 *   run, so a test can swap them) instead of a token.
 * - `PLUGIN_EXIT`: exit with this code after printing `PLUGIN_PRINT` (or nothing).
 * - `PLUGIN_PRINT`: print this text instead of an ExecCredential.
 * - `PLUGIN_API_VERSION`: answer with this apiVersion instead of the one asked for.
 *
 * The token it prints is `exec-token-<n>` for run n.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const script = `#!/usr/bin/env node
const fs = require("node:fs")
const path = require("node:path")
const dir = process.env.PLUGIN_STATE_DIR
const countFile = path.join(dir, "count")
const n = (fs.existsSync(countFile) ? Number(fs.readFileSync(countFile, "utf8")) : 0) + 1
fs.writeFileSync(countFile, String(n))
const info = process.env.KUBERNETES_EXEC_INFO
const record = { info: info === undefined ? null : JSON.parse(info), args: process.argv.slice(2) }
fs.writeFileSync(path.join(dir, "call-" + n + ".json"), JSON.stringify(record))
if (process.env.PLUGIN_PRINT !== undefined) process.stdout.write(process.env.PLUGIN_PRINT)
if (process.env.PLUGIN_EXIT !== undefined) process.exit(Number(process.env.PLUGIN_EXIT))
if (process.env.PLUGIN_PRINT !== undefined) process.exit(0)
const status = {}
if (process.env.PLUGIN_CERT_FILE !== undefined) {
  status.clientCertificateData = fs.readFileSync(process.env.PLUGIN_CERT_FILE, "utf8")
  status.clientKeyData = fs.readFileSync(process.env.PLUGIN_KEY_FILE, "utf8")
} else {
  status.token = "exec-token-" + n
}
if (process.env.PLUGIN_EXPIRES !== undefined) status.expirationTimestamp = process.env.PLUGIN_EXPIRES
const apiVersion = process.env.PLUGIN_API_VERSION || JSON.parse(info).apiVersion
process.stdout.write(JSON.stringify({ apiVersion, kind: "ExecCredential", status }))
`

/** Writes the plugin to `path` (mode 0755) and returns `path`. */
export const writeExecPlugin = (path: string): string => {
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.writeFileSync(path, script, { mode: 0o755 })
  return path
}

/** How many times the plugin with this state directory has run. */
export const runs = (stateDir: string): number => {
  const file = Path.join(stateDir, "count")
  return Fs.existsSync(file) ? Number(Fs.readFileSync(file, "utf8")) : 0
}

/** What run `n` was given. */
export const call = (stateDir: string, n: number): { readonly info: any; readonly args: ReadonlyArray<string> } =>
  JSON.parse(Fs.readFileSync(Path.join(stateDir, `call-${n}.json`), "utf8"))
