/**
 * How the API server's printers turn values into Table cells: ages as
 * `duration.HumanDuration` writes them, label maps and selectors as `labels.FormatLabels`
 * and `metav1.FormatLabelSelector` do, container lists, access modes, and numbers as Go's
 * `fmt` prints them.
 *
 * @internal
 */
import { Quantity } from "effect-kube"
import { isObject, type JsonObject } from "../store/json.js"

const second = 1000
const minute = 60 * second
const hour = 60 * minute
const day = 24 * hour
const year = 365 * day

/**
 * A duration in milliseconds as `duration.HumanDuration` shows it: two or three
 * significant figures (`45s`, `5m12s`, `3h`, `2d4h`, `3y`), `0s` for up to two seconds
 * in the future (clock skew), `<invalid>` beyond.
 *
 * @internal
 */
export const humanDuration = (ms: number): string => {
  const seconds = Math.trunc(ms / second)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.trunc(ms / minute)
  if (minutes < 10) {
    const s = seconds % 60
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`
  }
  if (minutes < 180) return `${minutes}m`
  const hours = Math.trunc(ms / hour)
  if (hours < 8) {
    const m = minutes % 60
    return m === 0 ? `${hours}h` : `${hours}h${m}m`
  }
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8) {
    const h = hours % 24
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const d = Math.trunc(hours / 24) % 365
    const y = Math.trunc(ms / year)
    return d === 0 ? `${y}y` : `${y}y${d}d`
  }
  return `${Math.trunc(ms / year)}y`
}

/** A timestamp in milliseconds, `undefined` when absent or unreadable (Go's zero time). @internal */
export const timeOf = (value: unknown): number | undefined => {
  if (typeof value !== "string" || value === "") return undefined
  const t = Date.parse(value)
  return Number.isNaN(t) ? undefined : t
}

/** `translateTimestampSince`: the age of a timestamp at `now`, `<unknown>` without one. @internal */
export const since = (timestamp: unknown, now: number): string => {
  const t = timeOf(timestamp)
  return t === undefined ? "<unknown>" : humanDuration(now - t)
}

/** `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` for none. @internal */
export const formatLabels = (labels: unknown): string => {
  if (!isObject(labels)) return "<none>"
  const keys = Object.keys(labels).sort()
  if (keys.length === 0) return "<none>"
  return keys.map((k) => `${k}=${String(labels[k])}`).join(",")
}

const stringsOf = (u: unknown): Array<string> =>
  Array.isArray(u) ? u.filter((v): v is string => typeof v === "string") : []

/**
 * A label selector as `labels.Selector.String()` writes it, `undefined` when it is
 * invalid: requirements sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`.
 * An empty selector is `""`.
 */
const selectorString = (selector: JsonObject): string | undefined => {
  const requirements: Array<{ readonly key: string; readonly text: string }> = []
  const matchLabels = isObject(selector.matchLabels) ? selector.matchLabels : {}
  for (const key of Object.keys(matchLabels)) {
    requirements.push({ key, text: `${key}=${String(matchLabels[key])}` })
  }
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e) || typeof e.key !== "string") return undefined
    const values = [...new Set(stringsOf(e.values))].sort()
    switch (e.operator) {
      case "In":
        if (values.length === 0) return undefined
        requirements.push({ key: e.key, text: `${e.key} in (${values.join(",")})` })
        break
      case "NotIn":
        if (values.length === 0) return undefined
        requirements.push({ key: e.key, text: `${e.key} notin (${values.join(",")})` })
        break
      case "Exists":
        requirements.push({ key: e.key, text: e.key })
        break
      case "DoesNotExist":
        requirements.push({ key: e.key, text: `!${e.key}` })
        break
      default:
        return undefined
    }
  }
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return requirements.map((r) => r.text).join(",")
}

/** `metav1.FormatLabelSelector`: `<none>` for an empty or missing selector, `<error>` for an invalid one. @internal */
export const formatLabelSelector = (selector: unknown): string => {
  if (!isObject(selector)) return "<none>"
  const text = selectorString(selector)
  return text === undefined ? "<error>" : text === "" ? "<none>" : text
}

/** `LabelSelectorAsSelector(...).String()` as the deployment printer uses it: `""` when empty, `<invalid>` when bad. @internal */
export const selectorOrInvalid = (selector: unknown): string => {
  if (!isObject(selector)) return ""
  return selectorString(selector) ?? "<invalid>"
}

/** `layoutContainerCells`: the containers' names and images, each joined with commas. @internal */
export const containerCells = (containers: unknown): [string, string] => {
  const list = Array.isArray(containers) ? containers.filter(isObject) : []
  return [
    list.map((c) => (typeof c.name === "string" ? c.name : "")).join(","),
    list.map((c) => (typeof c.image === "string" ? c.image : "")).join(",")
  ]
}

/** `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order. @internal */
export const accessModes = (modes: unknown): string => {
  const given = new Set(stringsOf(modes))
  return [
    ["ReadWriteOnce", "RWO"],
    ["ReadOnlyMany", "ROX"],
    ["ReadWriteMany", "RWX"],
    ["ReadWriteOncePod", "RWOP"]
  ].filter(([mode]) => given.has(mode!)).map(([, short]) => short).join(",")
}

/** A resource quantity in its canonical form (`1Gi` for `1024Mi`); the text itself when it does not parse. @internal */
export const quantity = (value: unknown): string => {
  if (typeof value === "number") return String(value)
  if (typeof value !== "string") return "0"
  const canonical = Quantity.canonicalize(value)
  return canonical._tag === "Success" ? canonical.success : value
}

/** An int-or-string as `intstr.IntOrString.String()` writes it. @internal */
export const intOrString = (value: unknown): string =>
  typeof value === "number" ? String(Math.trunc(value)) : typeof value === "string" ? value : "0"

/**
 * A float as Go's `fmt.Print` writes it (`%v`, the shortest `%g`): exponent form from an
 * exponent of 6 (or below -4), `1.5e+06` style.
 */
const goFloat = (n: number): string => {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "+Inf" : "-Inf"
  if (n === 0) return Object.is(n, -0) ? "-0" : "0"
  const [mantissa, exponentText] = n.toExponential().split("e") as [string, string]
  const exponent = Number(exponentText)
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? "-" : "+"
    const digits = String(Math.abs(exponent)).padStart(2, "0")
    return `${mantissa}e${sign}${digits}`
  }
  return String(n)
}

/**
 * A JSON value as client-go's JSONPath prints one result: strings as they are, objects
 * and arrays as compact JSON, numbers and booleans as Go's `fmt` does.
 *
 * @internal
 */
export const printValue = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : goFloat(value)
  if (typeof value === "boolean") return String(value)
  return JSON.stringify(value)
}
