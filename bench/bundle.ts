/**
 * The size of a program that lists pods, bundled as an application ships it: esbuild
 * `--bundle --minify --platform=node` (ES modules, every package bundled, Node's own modules
 * left out), once with effect-kube (from its build, `dist/esm`, as users get it: `Kube.api(Pods)
 * .list()` over `NodeKube.layer`) and once with `@kubernetes/client-node` (`CoreV1Api
 * .listNamespacedPod` after `loadFromDefault`). Reports the minified bytes, their gzip (zlib's
 * default level, as the `gzip` command) and the packages that take the most bytes of each.
 *
 * Each bundle is also run once against a FakeCluster served over loopback HTTPS (`KUBECONFIG`
 * set to its kubeconfig), and must list its pods: a bundle that cannot run is not measured.
 *
 * `npx tsx bench/bundle.ts [--top N]` (also part of `npm run bench`).
 */
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Zlib from "node:zlib"
import { pki } from "../test/util/pki.js"
import { ensureBuild } from "./build.js"
import { serverReady, spawnServer } from "./serve.js"
import type { ServerConfig } from "./server.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const root = Path.join(here, "..")

export type BundleClient = "effect-kube" | "client-node"

export interface BundleResult {
  readonly minifiedBytes: number
  readonly gzipBytes: number
  /** The packages (or `effect-kube` itself) that take the most bytes of the minified output, largest first. */
  readonly packages: ReadonlyArray<{ readonly name: string; readonly bytes: number }>
  /** The input files that take the most bytes, largest first. */
  readonly files: ReadonlyArray<{ readonly path: string; readonly bytes: number }>
}

const programs: Record<BundleClient, string> = {
  "effect-kube": [
    `import * as Effect from "effect/Effect"`,
    `import { Kube, NodeKube, Pods } from ${JSON.stringify(Path.join(root, "packages", "effect-kube", "dist", "esm", "index.js"))}`,
    `const pods = await Effect.runPromise(Kube.api(Pods, { namespace: "bundle" }).list().pipe(Effect.provide(NodeKube.layer)))`,
    `console.log(pods.items.length)`
  ].join("\n"),
  "client-node": [
    `import * as k8s from "@kubernetes/client-node"`,
    `const kc = new k8s.KubeConfig()`,
    `kc.loadFromDefault()`,
    `const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: "bundle" })`,
    `console.log(pods.items.length)`
  ].join("\n")
}

/** `node_modules/@scope/name/...` → `@scope/name`; our own build → `effect-kube`; the program itself. */
const packageOf = (input: string): string => {
  const at = input.lastIndexOf("node_modules/")
  if (at === -1) return input.includes("dist/esm/") ? "effect-kube" : "(the program)"
  const parts = input.slice(at + "node_modules/".length).split("/")
  return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!
}

const bundleOne = async (client: BundleClient, outFile: string, top: number): Promise<BundleResult> => {
  const built = await esbuild.build({
    stdin: { contents: programs[client], resolveDir: root, sourcefile: `${client}.mjs`, loader: "js" },
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: outFile,
    metafile: true,
    logLevel: "error",
    // ESM output of CommonJS dependencies (client-node's): their `require` of Node's modules needs one.
    banner: { js: `import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);` }
  })
  const output = Fs.readFileSync(outFile)
  const inputs = Object.values(built.metafile.outputs)[0]!.inputs
  const byPackage = new Map<string, number>()
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
    const name = packageOf(input)
    byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput)
  }
  return {
    minifiedBytes: output.length,
    gzipBytes: Zlib.gzipSync(output).length,
    packages: [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, bytes]) => ({ name, bytes })),
    files: Object.entries(inputs)
      .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
      .slice(0, top)
      .map(([path, { bytesInOutput }]) => ({ path: path.replace(/^.*node_modules\//, ""), bytes: bytesInOutput }))
  }
}

/** Runs a bundle with `KUBECONFIG` set, and returns what it printed (the number of pods it listed). */
const runBundle = (file: string, kubeconfig: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${file} exited with ${code}: ${err}`))))
  })

/** Builds effect-kube when `dist/esm` is stale, bundles both programs, checks that each runs, and returns the sizes. */
export const measureBundles = async (top = 8): Promise<Record<BundleClient, BundleResult>> => {
  ensureBuild()
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-bundle-"))
  const certs = pki()
  const pods = 3
  const config: ServerConfig = {
    tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert },
    token: `bundle-${Math.random().toString(36).slice(2)}`,
    seed: [{ namespace: "bundle", pods }]
  }
  const server = spawnServer(config)
  try {
    const ready = await serverReady(server)
    const results = {} as Record<BundleClient, BundleResult>
    for (const client of ["effect-kube", "client-node"] as const) {
      const file = Path.join(dir, `${client}.mjs`)
      results[client] = await bundleOne(client, file, top)
      const listed = await runBundle(file, ready.kubeconfigPath)
      if (listed !== String(pods)) throw new Error(`the ${client} bundle listed ${listed} pods, not ${pods}`)
    }
    return results
  } finally {
    server.kill("SIGTERM")
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)} KB`

/** The markdown tables of `measureBundles`: sizes, then the largest packages of each bundle. */
export const bundleTable = (results: Record<BundleClient, BundleResult>): string => {
  const ours = results["effect-kube"]
  const theirs = results["client-node"]
  const rows = [
    "| list-pods program, esbuild --bundle --minify --platform=node | effect-kube | client-node | effect-kube / client-node |",
    "|---|---:|---:|---:|",
    `| minified | ${kb(ours.minifiedBytes)} | ${kb(theirs.minifiedBytes)} | ${
      (ours.minifiedBytes / theirs.minifiedBytes).toFixed(2)
    }x |`,
    `| gzip | ${kb(ours.gzipBytes)} | ${kb(theirs.gzipBytes)} | ${(ours.gzipBytes / theirs.gzipBytes).toFixed(2)}x |`,
    "",
    "| largest packages (minified bytes) | effect-kube's bundle | client-node's bundle |",
    "|---|---|---|"
  ]
  for (let i = 0; i < Math.max(ours.packages.length, theirs.packages.length); i++) {
    const cell = (p: { readonly name: string; readonly bytes: number } | undefined) =>
      p === undefined ? "" : `${p.name} ${kb(p.bytes)}`
    rows.push(`| ${i + 1} | ${cell(ours.packages[i])} | ${cell(theirs.packages[i])} |`)
  }
  return rows.join("\n")
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const at = process.argv.indexOf("--top")
  measureBundles(at === -1 ? 8 : Number(process.argv[at + 1])).then((results) => {
    console.log(bundleTable(results))
    for (const client of ["effect-kube", "client-node"] as const) {
      console.log(`\n${client}, largest files: ${
        results[client].files.map((f) => `${f.path} ${kb(f.bytes)}`).join(", ")
      }`)
    }
  }, (error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
