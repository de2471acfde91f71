/**
 * Runs scenarios on two endpoints alike and compares what a client observes of each, normalised.
 */
import type { Endpoint, Observed, Step } from "./client.js"
import { differences, normalise } from "./normalise.js"
import type { Scenario } from "./scenarios.js"

export interface Outcome {
  readonly scenario: Scenario
  readonly identical: boolean
  readonly differences: ReadonlyArray<string>
  readonly real: unknown
  readonly fake: unknown
  readonly error?: string
}

const objectOf = (o: Observed): { resourceVersion?: string; name?: string; uid?: string } | undefined => {
  const body = o.body as { kind?: string; metadata?: { resourceVersion?: string; name?: string; uid?: string } } | undefined
  return o.status < 300 && body?.kind !== "Status" ? body?.metadata : undefined
}

/** The steps on one endpoint, in order; `{rv}` and `{name}` are the last object's, `{rv0}` the first's. */
export const runOn = async (endpoint: Endpoint, steps: ReadonlyArray<Step>, ns: string): Promise<Array<Observed>> => {
  const vars: Record<string, string> = { ns }
  const out: Array<Observed> = []
  for (const step of steps) {
    const observed = await endpoint.request(step, vars)
    out.push(observed)
    const meta = objectOf(observed)
    if (meta?.resourceVersion !== undefined) {
      vars["rv"] = meta.resourceVersion
      vars["rv0"] ??= meta.resourceVersion
    }
    if (meta?.name !== undefined) vars["name"] = meta.name
    if (meta?.uid !== undefined) vars["uid"] = meta.uid
  }
  return out
}

export const compare = async (
  scenario: Scenario,
  real: Endpoint,
  fake: Endpoint,
  ns: string
): Promise<Outcome> => {
  try {
    const [onReal, onFake] = await Promise.all([runOn(real, scenario.steps, ns), runOn(fake, scenario.steps, ns)])
    const views = scenario.steps.map((s) => ({ picked: s.pick, statusOnly: s.statusOnly }))
    const a = normalise(onReal, views)
    const b = normalise(onFake, views)
    const diffs = differences(a, b)
    return { scenario, identical: diffs.length === 0, differences: diffs, real: a, fake: b }
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e)
    return { scenario, identical: false, differences: [`error: ${error}`], real: undefined, fake: undefined, error }
  }
}

/** Runs `f` over `items`, `concurrency` at a time. */
export const pool = async <A, B>(items: ReadonlyArray<A>, concurrency: number, f: (a: A) => Promise<B>): Promise<Array<B>> => {
  const out: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await f(items[i]!)
    }
  }))
  return out
}
