/**
 * OpenShift Template processing, as `processedtemplates` does it (library-go's
 * templateprocessing): parameter values (given, generated from an expression, or
 * defaulted, and required ones refused when empty), then the rendering the client's
 * `Template.render` shares: `${NAME}` interpolation in every string, `${{NAME}}` whole
 * JSON values, hard-coded namespaces dropped, the template's labels on every object.
 *
 * @internal
 */
import { renderTemplate } from "effect-kube/internal/testing"
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
  const { labels, message, objects } = renderTemplate(template, values)
  return {
    ...template,
    kind: "Template",
    apiVersion: "template.openshift.io/v1",
    ...(message !== undefined ? { message } : {}),
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
