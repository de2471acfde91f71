#!/usr/bin/env node
// npm run cluster:build: builds cluster/ (a Go module: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kubectl and a kubelet stand-in in
// one binary) into .cluster/bin/kube-cluster, with .cluster/bin/kubectl a link
// to it. A second run is a no-op when nothing in cluster/ changed.
//
//   node scripts/cluster-build.mjs [--force]
//
// GO=/path/to/go picks the toolchain (default: go on PATH, else /usr/local/go/bin/go).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const src = path.join(root, "cluster")
const binDir = path.join(root, ".cluster", "bin")
const bin = path.join(binDir, "kube-cluster")
const kubectl = path.join(binDir, "kubectl")
const force = process.argv.includes("--force")

const fail = (line) => {
  console.error(`cluster:build: ${line}`)
  process.exit(1)
}

const findGo = () => {
  const candidates = [process.env.GO, "go", "/usr/local/go/bin/go"].filter(Boolean)
  for (const c of candidates) {
    const r = spawnSync(c, ["version"], { encoding: "utf8" })
    if (r.status === 0) return c
  }
  return undefined
}

// Newest modification time among the files the binary is built from.
const newestSource = (dir) => {
  let newest = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p))
    else if (/\.go$|^go\.(mod|sum)$/.test(e.name)) newest = Math.max(newest, fs.statSync(p).mtimeMs)
  }
  return newest
}

const linkKubectl = () => {
  try {
    fs.rmSync(kubectl, { force: true })
    fs.symlinkSync("kube-cluster", kubectl)
  } catch (e) {
    fail(`cannot link ${kubectl}: ${e.message}`)
  }
}

const started = Date.now()
if (!force && fs.existsSync(bin) && fs.statSync(bin).mtimeMs > newestSource(src)) {
  if (!fs.existsSync(kubectl)) linkKubectl()
  console.error(`cluster:build: ${path.relative(root, bin)} is up to date (${Date.now() - started} ms)`)
  process.exit(0)
}

const go = findGo()
if (go === undefined) fail("no Go toolchain found (looked for $GO, go on PATH, /usr/local/go/bin/go); install Go 1.26 or set GO")

// The version kube-apiserver reports at /version and kubectl version shows:
// the k8s.io/kubernetes release cluster/go.mod requires.
const gomod = fs.readFileSync(path.join(src, "go.mod"), "utf8")
const m = /^\s*k8s\.io\/kubernetes\s+(v(\d+)\.(\d+)\.\d+\S*)/m.exec(gomod)
if (!m) fail("cluster/go.mod does not require k8s.io/kubernetes")
const [, version, major, minor] = m
const x = (pkg) => [
  `-X ${pkg}.gitVersion=${version}`,
  `-X ${pkg}.gitMajor=${major}`,
  `-X ${pkg}.gitMinor=${minor}`,
  `-X ${pkg}.gitTreeState=clean`,
  `-X ${pkg}.gitCommit=`,
  `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`
]
const ldflags = ["-s", "-w", ...x("k8s.io/component-base/version"), ...x("k8s.io/client-go/pkg/version")].join(" ")

fs.mkdirSync(binDir, { recursive: true })
const tmp = `${bin}.tmp-${process.pid}`
console.error(`cluster:build: go build (${version}) into ${path.relative(root, bin)}; the first build takes many minutes`)
const r = spawnSync(go, ["build", "-o", tmp, "-ldflags", ldflags, "."], {
  cwd: src,
  encoding: "utf8",
  stdio: ["ignore", "inherit", "pipe"],
  env: { ...process.env, GOFLAGS: [process.env.GOFLAGS, "-mod=readonly"].filter(Boolean).join(" ") }
})
if (r.error) fail(`cannot run ${go}: ${r.error.message}`)
if (r.status !== 0) {
  fs.rmSync(tmp, { force: true })
  const err = r.stderr ?? ""
  const lines = err.split("\n").filter((l) => l.trim() !== "")
  const fetch = lines.find((l) => /dial tcp|proxyconnect|no such host|i\/o timeout|connection refused|reading https?:|verifying .*: |unknown revision|no matching versions|missing go\.sum entry|SECURITY ERROR|module lookup disabled|GOFLAGS=-mod=mod/.test(l))
  if (fetch) fail(`a Go module could not be fetched or verified: ${fetch.trim()}`)
  process.stderr.write(err)
  fail(`go build failed (${lines.length} lines above; first: ${(lines[0] ?? "").trim()})`)
}
fs.renameSync(tmp, bin)
linkKubectl()
console.error(`cluster:build: built ${path.relative(root, bin)} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
