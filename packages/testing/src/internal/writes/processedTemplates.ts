/**
 * OpenShift Template processing, as `processedtemplates` does it (library-go's
 * templateprocessing): parameter values (given, generated from an expression, or
 * defaulted), `${NAME}` interpolation in every string (map keys, labels and the message
 * included) and `${{NAME}}` substitution of whole JSON values; an object's hard-coded
 * namespace is dropped, a parameterised one kept; the template's labels are set on every
 * object, over its own.
 *
 * @internal
 */
import { json, type RawRequest, type RawResponse, readBody } from "../serve/http.js"
import { clone, isObject, type JsonObject } from "../store/json.js"
import * as Status from "../serve/statusBodies.js"

const classes: Record<string, string> = {
  w: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
  d: "0123456789",
  a: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
  A: "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
}

const expandClass = (body: string): string => {
  let chars = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c === "\\" && i + 1 < body.length) {
      const e = body[i + 1]!
      chars += classes[e] ?? e
      i++
    } else if (i + 2 < body.length && body[i + 1] === "-") {
      const from = c.charCodeAt(0)
      const to = body.charCodeAt(i + 2)
      if (to < from) throw new Error(`invalid range ${c}-${body[i + 2]}`)
      for (let code = from; code <= to; code++) chars += String.fromCharCode(code)
      i += 2
    } else {
      chars += c
    }
  }
  if (chars === "") throw new Error("empty character class")
  return chars
}

/**
 * Generates a value from an OpenShift generator expression: literal characters,
 * character classes (`[a-z0-9]`, `[\w]`, `[\d]`, `[\a]`, `[\A]`) and `{n}` counts.
 *
 * @internal
 */
export const generate = (expression: string, random: () => number = Math.random): string => {
  let out = ""
  let i = 0
  while (i < expression.length) {
    let chars: string
    const c = expression[i]!
    if (c === "[") {
      const close = expression.indexOf("]", i + 1)
      if (close === -1) throw new Error(`unclosed character class in "${expression}"`)
      chars = expandClass(expression.slice(i + 1, close))
      i = close + 1
    } else if (c === "\\" && i + 1 < expression.length) {
      const e = expression[i + 1]!
      chars = classes[e] ?? e
      i += 2
    } else {
      chars = c
      i++
    }
    let count = 1
    if (expression[i] === "{") {
      const close = expression.indexOf("}", i)
      if (close === -1) throw new Error(`unclosed count in "${expression}"`)
      count = Number(expression.slice(i + 1, close))
      if (!Number.isInteger(count) || count < 0) throw new Error(`invalid count in "${expression}"`)
      i = close + 1
    }
    for (let n = 0; n < count; n++) out += chars[Math.floor(random() * chars.length)]
  }
  return out
}

/** `${{NAME}}`, the whole string: the value replaces it as JSON (a number, a boolean, an object). */
const whole = /^\$\{\{([a-zA-Z0-9_]+)\}\}$/
/** `${NAME}` anywhere in a string, as many times as it appears. */
const anywhere = /\$\{([a-zA-Z0-9_]+?)\}/g
/** Whether a string names a parameter. */
const reference = /\$\{([a-zA-Z0-9_]+?)\}/

/** A string with its `${NAME}` references of known parameters replaced (unknown ones stay). */
const substituteString = (value: string, params: ReadonlyMap<string, string>): string =>
  value.replace(anywhere, (match: string, name: string) => params.get(name) ?? match)

/**
 * What `EvaluateParameterSubstitution` makes of a string value: `${{NAME}}` alone becomes
 * the parameter's value read as JSON (the text itself when it is not JSON), else every
 * `${NAME}` is replaced in the text.
 */
const substituteValue = (value: string, params: ReadonlyMap<string, string>): unknown => {
  const m = whole.exec(value)
  if (m !== null && params.has(m[1]!)) {
    const raw = params.get(m[1]!)!
    try {
      return JSON.parse(raw)
    } catch {
      return raw
    }
  }
  return substituteString(value, params)
}

/** Every string of an object, map keys included, as `SubstituteParameters` visits them. */
const substitute = (value: unknown, params: ReadonlyMap<string, string>): unknown => {
  if (typeof value === "string") return substituteValue(value, params)
  if (Array.isArray(value)) return value.map((v) => substitute(v, params))
  if (isObject(value)) {
    const out: JsonObject = {}
    for (const k of Object.keys(value)) out[substituteString(k, params)] = substitute(value[k], params)
    return out
  }
  return value
}

/**
 * `stripNamespace`: an object's hard-coded namespace is dropped (it is created in the
 * namespace the template is processed in); one that names a parameter (`${NAMESPACE}`)
 * stays, to be substituted.
 */
const stripNamespace = (obj: unknown): void => {
  if (!isObject(obj) || !isObject(obj.metadata) || !("namespace" in obj.metadata)) return
  const namespace = obj.metadata.namespace
  if (typeof namespace === "string" && reference.test(namespace)) return
  if (typeof namespace === "string") delete obj.metadata.namespace
  else obj.metadata.namespace = ""
}

/**
 * Processes a Template: the processed Template, or a 422 Status for a required
 * parameter without a value and a 400 for a bad generator.
 *
 * @internal
 */
export const processTemplate = (template: JsonObject): JsonObject => {
  const name = typeof (template.metadata as JsonObject | undefined)?.name === "string"
    ? (template.metadata as JsonObject).name as string
    : ""
  const parameters = Array.isArray(template.parameters) ? (clone(template.parameters) as Array<unknown>) : []
  const values = new Map<string, string>()
  const causes: Array<{ reason: string; field: string; message: string }> = []
  parameters.forEach((p, index) => {
    if (!isObject(p) || typeof p.name !== "string") return
    let value = typeof p.value === "string" ? p.value : p.value === undefined || p.value === null ? "" : String(p.value)
    if (value === "" && p.generate === "expression") {
      try {
        value = generate(typeof p.from === "string" ? p.from : "")
      } catch (e) {
        throw Status.invalid({ group: "template.openshift.io", plural: "templates", kind: "Template" }, name, [{
          reason: "FieldValueInvalid",
          field: `template.parameters[${index}]`,
          message: `Invalid value: ${JSON.stringify(String(p.from))}: failed to generate value: ${(e as Error).message}`
        }])
      }
      p.value = value
    }
    if (value === "" && p.required === true) {
      causes.push({
        reason: "FieldValueRequired",
        field: `template.parameters[${index}]`,
        message: `Required value: template.parameters[${index}]: parameter ${p.name} is required and must be specified`
      })
    }
    values.set(p.name, value)
  })
  if (causes.length > 0) {
    throw Status.invalid({ group: "template.openshift.io", plural: "templates", kind: "Template" }, name, causes)
  }
  const labels: JsonObject | undefined = isObject(template.labels) ? {} : undefined
  for (const [k, v] of Object.entries(isObject(template.labels) ? template.labels : {})) {
    labels![substituteString(k, values)] = typeof v === "string" ? substituteString(v, values) : v
  }
  const objects = (Array.isArray(template.objects) ? template.objects : []).map((o) => {
    const item = clone(o)
    stripNamespace(item)
    const obj = substitute(item, values)
    // the template's labels win over an object's own, as addObjectLabels overwrites them
    if (labels !== undefined && isObject(obj)) {
      const metadata = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {})
      metadata.labels = { ...(isObject(metadata.labels) ? metadata.labels : {}), ...labels }
    }
    return obj
  })
  return {
    ...template,
    kind: "Template",
    apiVersion: "template.openshift.io/v1",
    ...(typeof template.message === "string" ? { message: substituteString(template.message, values) } : {}),
    ...(labels !== undefined ? { labels } : {}),
    parameters,
    objects
  }
}

/** Answers a POST to `processedtemplates`: the Template with its objects processed. @internal */
export const processRequest = async (request: RawRequest): Promise<RawResponse> => {
  const body = await readBody(request)
  if (!isObject(body)) throw Status.badRequest("the body of the request must be a Template")
  return json(201, processTemplate(body))
}
