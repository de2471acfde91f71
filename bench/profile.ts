/**
 * Prints the functions with the most self time in a V8 `.cpuprofile` (from
 * `node --cpu-prof`, or `npm run bench -- --profile effect-kube`):
 * `tsx bench/profile.ts <file.cpuprofile> [how many, default 30] [inclusive-filter]`.
 * With a filter (a substring of a file path, e.g. `src/`), it also lists the matching
 * functions by inclusive time (their own time plus everything they called).
 */
import * as Fs from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, countArg, filter] = process.argv.slice(2)

const short = (url: string): string => url.replace(/^file:\/\//, "").replace(process.cwd() + "/", "")

const line = (us: number, total: number, what: string): string =>
  `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${what}\n`
if (file === undefined) {
  process.stderr.write("usage: tsx bench/profile.ts <file.cpuprofile> [count]\n")
  process.exit(2)
}
const profile = JSON.parse(Fs.readFileSync(file, "utf8")) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map<string, number>()
const byFile = new Map<string, number>()
let total = 0
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!
  const dt = profile.timeDeltas[i] ?? 0
  total += dt
  const { functionName, lineNumber, url } = node.callFrame
  const where = url === "" ? "" : ` ${short(url)}:${lineNumber + 1}`
  const key = `${functionName || "(anonymous)"}${where}`
  self.set(key, (self.get(key) ?? 0) + dt)
  const area = url === ""
    ? functionName.startsWith("(") ? functionName : "(native)"
    : url.startsWith("node:")
    ? "node:*"
    : short(url).replace(/^(node_modules\/(@[^/]+\/)?[^/]+)\/.*$/, "$1")
  byFile.set(area, (byFile.get(area) ?? 0) + dt)
}
process.stdout.write(`self time by file or package:\n`)
for (const [area, us] of [...byFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  process.stdout.write(line(us, total, area))
}
process.stdout.write(`self time by function:\n`)
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg ?? 30))
process.stdout.write(`total ${(total / 1000).toFixed(0)} ms sampled\n`)
for (const [key, us] of rows) {
  process.stdout.write(line(us, total, key))
}

if (filter !== undefined) {
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const keyOf = (n: Node) => {
    const { functionName, lineNumber, url } = n.callFrame
    return `${functionName || "(anonymous)"} ${short(url)}:${lineNumber + 1}`
  }
  const inclusive = new Map<string, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0
    const seen = new Set<string>()
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!
      if (!n.callFrame.url.includes(filter)) continue
      const key = keyOf(n)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt)
    }
  }
  process.stdout.write(`inclusive time of functions in ${filter}:\n`)
  for (const [key, us] of [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg ?? 30))) {
    process.stdout.write(line(us, total, key))
  }
}
