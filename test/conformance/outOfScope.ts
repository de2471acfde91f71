/**
 * The differences the suite does not fail on, each with its reason, in one table (the README's FakeCluster section
 * shows it). A row names the scenarios it covers (a RegExp over `Kind verb` names) and the observed paths it excuses
 * (a RegExp over a difference's path, `/1/body/message`); a scenario whose every difference some row excuses is
 * "declared", any other difference fails the suite. `open: true` marks a difference the fake should lose (a fix not yet
 * made) rather than one it keeps on purpose.
 */
export interface OutOfScope {
  readonly scenarios: RegExp
  readonly paths: RegExp
  readonly reason: string
  readonly open?: boolean
}

export const outOfScope: ReadonlyArray<OutOfScope> = [
  {
    scenarios: /./,
    paths: /managedFields/,
    reason: "managedFields are computed from leaves and list keys without the built-in kinds' schemas: no `.` entry for maps and optional structs set by an Update, atomic structs (roleRef, selector) split into fields, fields the server defaults not owned",
    open: true
  },
  {
    scenarios: /./,
    paths: /\/body\/message$|\/body\/details\/causes\/\d+\/message$/,
    reason: "the wording of a few error messages (JSON decode errors, JSON patch failures, selector parse errors, conflicts): the fake says the same reason and code in its own words",
    open: true
  }
]

/** The row that excuses one difference line (`/1/body/message: real … ≠ fake …`) of a scenario, if any. */
export const excuse = (scenario: string, difference: string): OutOfScope | undefined => {
  const path = difference.slice(0, difference.indexOf(": "))
  return outOfScope.find((row) => row.scenarios.test(scenario) && row.paths.test(path))
}
