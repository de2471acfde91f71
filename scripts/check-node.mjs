// Run first by `npm test`, `npm run demo` and the examples: one clear line, and exit 1, when this
// Node.js is older than the workspace's engines field, before vitest or tsx fail in ways that hide
// why (Node 20 gets as far as `Map.groupBy is not a function` inside vitest's reporter).
// Written for old Nodes: no syntax or API newer than Node 12's. EFFECT_KUBE_NODE_VERSION
// stands in for process.versions.node (the check's own test uses it).
import { readFileSync } from "fs"

var packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
var range = (packageJson.engines && packageJson.engines.node) || ">=0.0.0"
var match = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim())
if (match === null) {
  console.error("check-node: the engines field (" + range + ") is not of the form >=X.Y.Z that this check reads")
  process.exit(1)
}
var needed = [Number(match[1]), Number(match[2]), Number(match[3])]
var current = process.env.EFFECT_KUBE_NODE_VERSION || process.versions.node
var have = current.replace(/^v/, "").split(".").map(function (part) {
  return Number(part) || 0
})
var older = false
for (var i = 0; i < 3; i++) {
  if ((have[i] || 0) !== needed[i]) {
    older = (have[i] || 0) < needed[i]
    break
  }
}
if (older) {
  console.error(
    "effect-kube needs Node.js " + needed.join(".") + " or later (engines: \"" + range + "\"), but this is Node.js " +
      current + " (" + process.execPath + "): install Node.js " + needed.join(".") + " or later (for example `nvm install " + needed[0] +
      "`), put it first on PATH, then run `npm ci` and this command again."
  )
  process.exit(1)
}
