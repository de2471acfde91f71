/**
 * What the fake deliberately does not do as kube-apiserver does, by scenario name (a string, or a RegExp over names),
 * with the reason. The README's FakeCluster section shows these rows; every other scenario counts, and the suite fails
 * on any difference in one.
 */
export interface OutOfScope {
  readonly scenarios: string | RegExp
  readonly reason: string
}

export const outOfScope: ReadonlyArray<OutOfScope> = []

/** The row that declares a scenario out of scope, if any. */
export const declared = (scenario: string): OutOfScope | undefined =>
  outOfScope.find((row) => typeof row.scenarios === "string" ? row.scenarios === scenario : row.scenarios.test(scenario))
