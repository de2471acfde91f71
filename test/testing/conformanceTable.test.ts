/**
 * The README's table of the fake's declared differences from kube-apiserver is test/conformance/outOfScope.ts, row for
 * row: a row added, changed or removed there must be so in the README too.
 */
import { assert, it } from "@effect/vitest"
import * as fs from "node:fs"
import { outOfScope } from "../conformance/outOfScope.js"

const cell = (s: string) => s.replace(/\|/g, "\\|")
const pattern = (r: RegExp) => `\`${cell(r.source)}\``

it("the README shows every declared difference of test/conformance/outOfScope.ts, and no other", () => {
  const readme = fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const header = "| scenarios | observed paths | why | |"
  const start = readme.indexOf(header)
  assert.isAtLeast(start, 0, "the README has the table")
  const lines = readme.slice(start).split("\n").slice(2)
  const rows = lines.slice(0, lines.findIndex((l) => !l.startsWith("|")))
  const expected = outOfScope.map((row) =>
    `| ${pattern(row.scenarios)} | ${pattern(row.paths)} | ${cell(row.reason)} | ${row.open ? "open" : "by design"} |`
  )
  assert.deepStrictEqual(rows, expected)
})
