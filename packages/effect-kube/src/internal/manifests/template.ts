/**
 * The implementation of `Template`: fetch the Template, fill its parameters in a copy,
 * refuse any value the server would generate (a generated name differs on every
 * processing, so a later delete could not find the objects), and let the server render
 * it through `processedtemplates`; or render it here, as library-go's templateprocessing
 * does (`oc process --local`), for a cluster without OpenShift's API. Parameter values are
 * never quoted in errors: they are often passwords.
 */
import * as Effect from "effect/Effect"
import { ValidationError } from "../../Errors.js"
import type * as Kube from "../../Kube.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Manifests from "../../Manifests.js"
import type * as Template from "../../Template.js"
import * as client from "../client/execute.js"
import { isObject, type JsonObject, malformed } from "../codec/codec.js"
import { jsonBody, type Spec } from "../request/spec.js"
import { checkName, checkNamespace } from "../request/inputChecks.js"

const prefix = "/apis/template.openshift.io/v1/namespaces"

const describeValue = (u: unknown): string =>
  u === null
    ? "null"
    : u === undefined
    ? "undefined"
    : typeof u === "number"
    ? "a non-finite number"
    : Array.isArray(u)
    ? "an array"
    : `a ${typeof u}`

/** A parameter value as the template takes it: text. */
const parameterText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" && Number.isFinite(value)) return String(value)
  return undefined
}

/** Checks the parameters given, before any request: every value must be text, a boolean or a finite number. */
const checkParameters = (
  subject: string,
  parameters: Template.Parameters
): Effect.Effect<ReadonlyMap<string, string>, ValidationError> => {
  if (!isObject(parameters)) {
    return Effect.fail(
      new ValidationError({
        subject: `${subject}: parameters`,
        detail: `expected an object, got ${describeValue(parameters)}`
      })
    )
  }
  const values = new Map<string, string>()
  for (const name of Object.keys(parameters)) {
    const text = parameterText(parameters[name])
    if (text === undefined) {
      return Effect.fail(
        new ValidationError({
          subject: `${subject}: parameter ${name}`,
          detail: `must be a string, a boolean or a finite number (got ${describeValue(parameters[name])})`
        })
      )
    }
    values.set(name, text)
  }
  return Effect.succeed(values)
}

const serverManagedMetadata = ["uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"]

/** The template to send for processing: its parameters set, nothing left to a generator. */
export const fill = (
  subject: string,
  template: JsonObject,
  values: ReadonlyMap<string, string>,
  namespace: string
): Effect.Effect<JsonObject, ValidationError> =>
  Effect.gen(function*() {
    const declared = template["parameters"] ?? []
    if (!Array.isArray(declared) || !declared.every((p) => isObject(p) && typeof p["name"] === "string")) {
      return yield* new ValidationError({ subject, detail: "has parameters that are not a list of named parameters" })
    }
    const known = new Set(declared.map((p) => p["name"] as string))
    for (const name of values.keys()) {
      if (!known.has(name)) {
        return yield* new ValidationError({
          subject: `${subject}: parameter ${name}`,
          detail: `is not a parameter of this template (it has ${known.size === 0 ? "none" : [...known].join(", ")})`
        })
      }
    }
    const parameters: Array<JsonObject> = []
    for (const declaredParameter of declared as ReadonlyArray<JsonObject>) {
      const name = declaredParameter["name"] as string
      const given = values.get(name)
      const parameter: JsonObject = { ...declaredParameter }
      if (given !== undefined) {
        parameter["value"] = given
        delete parameter["generate"]
        delete parameter["from"]
      }
      const value = parameter["value"]
      const empty = value === undefined || value === null || value === ""
      if (empty && parameter["generate"] !== undefined && parameter["generate"] !== "") {
        return yield* new ValidationError({
          subject: `${subject}: parameter ${name}`,
          detail: "has no value and would be generated anew on every processing: give it a value, so that a later " +
            "get or delete renders the same objects"
        })
      }
      if (empty && parameter["required"] === true) {
        return yield* new ValidationError({
          subject: `${subject}: parameter ${name}`,
          detail: "is required and has no value"
        })
      }
      parameters.push(parameter)
    }
    const metadata: JsonObject = { ...(isObject(template["metadata"]) ? template["metadata"] : {}) }
    for (const field of serverManagedMetadata) delete metadata[field]
    metadata["namespace"] = namespace
    return { ...template, apiVersion: "template.openshift.io/v1", kind: "Template", metadata, parameters }
  })

export const process = (
  name: string,
  parameters: Template.Parameters,
  options: Template.ProcessOptions = {}
): Effect.Effect<ReadonlyArray<Manifests.Manifest>, Kube.Error, Kube.Requirements> =>
  Effect.gen(function*() {
    yield* checkName(name, "template name")
    const namespace = options.namespace !== undefined
      ? yield* checkNamespace(options.namespace, "namespace")
      : yield* Effect.flatMap(
        KubeConfig,
        (config) => checkNamespace(config.namespace, "namespace (from the kubeconfig)")
      )
    const templateNamespace = options.templateNamespace !== undefined
      ? yield* checkNamespace(options.templateNamespace, "templateNamespace")
      : namespace
    const subject = `Template ${templateNamespace}/${name}`
    const values = yield* checkParameters(subject, parameters)

    const getSpec: Spec = {
      method: "GET",
      path: `${prefix}/${templateNamespace}/templates/${name}`,
      operation: { verb: "get", kind: "Template", namespace: templateNamespace, name }
    }
    const template = yield* client.sendJson(getSpec)
    if (!isObject(template) || template["kind"] !== "Template") {
      return yield* malformed(getSpec, "expected a Template")
    }
    const body = yield* fill(subject, template, values, namespace)

    const processSpec: Spec = {
      method: "POST",
      path: `${prefix}/${namespace}/processedtemplates`,
      body: jsonBody(body),
      operation: { verb: "process", kind: "Template", namespace, name }
    }
    const processed = yield* client.sendJson(processSpec)
    const objects = isObject(processed) ? processed["objects"] : undefined
    if (!Array.isArray(objects) || !objects.every(isObject)) {
      return yield* malformed(processSpec, "expected a Template whose objects are a list of objects")
    }
    return objects as ReadonlyArray<Manifests.Manifest>
  })

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

/** Every string of a value, map keys included, as `SubstituteParameters` visits them; a new value. */
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
 * stays, to be substituted. Returns a copy.
 */
const withoutNamespace = (obj: unknown): unknown => {
  if (!isObject(obj) || !isObject(obj["metadata"]) || !("namespace" in obj["metadata"])) return obj
  const namespace = obj["metadata"]["namespace"]
  if (typeof namespace === "string" && reference.test(namespace)) return obj
  const { namespace: _, ...metadata } = obj["metadata"]
  return { ...obj, metadata: typeof namespace === "string" ? metadata : { ...metadata, namespace: "" } }
}

/** What processing a Template renders from parameter values already decided. */
export interface Rendered {
  readonly objects: ReadonlyArray<unknown>
  readonly labels: JsonObject | undefined
  readonly message: string | undefined
}

/**
 * The objects of a Template rendered with `values`, as `processedtemplates` renders them:
 * `${NAME}` in every string (map keys, labels and the message included), `${{NAME}}` as a
 * whole JSON value, an object's hard-coded namespace dropped, the template's labels set on
 * every object over its own (as `addObjectLabels` overwrites them). Shared with the fake's
 * `processedtemplates`, which decides the values first (generating those it must).
 */
export const renderWith = (template: JsonObject, values: ReadonlyMap<string, string>): Rendered => {
  const ownLabels = template["labels"]
  const labels: JsonObject | undefined = isObject(ownLabels) ? {} : undefined
  for (const [k, v] of Object.entries(isObject(ownLabels) ? ownLabels : {})) {
    labels![substituteString(k, values)] = typeof v === "string" ? substituteString(v, values) : v
  }
  const objects = (Array.isArray(template["objects"]) ? template["objects"] : []).map((o) => {
    const obj = substitute(withoutNamespace(o), values)
    if (labels === undefined || !isObject(obj)) return obj
    const metadata = isObject(obj["metadata"]) ? obj["metadata"] : {}
    return { ...obj, metadata: { ...metadata, labels: { ...(isObject(metadata["labels"]) ? metadata["labels"] : {}), ...labels } } }
  })
  const message = typeof template["message"] === "string" ? substituteString(template["message"], values) : undefined
  return { objects, labels, message }
}

export const render = (
  template: Manifests.Manifest,
  parameters: Template.Parameters
): Effect.Effect<ReadonlyArray<Manifests.Manifest>, ValidationError> =>
  Effect.gen(function*() {
    const metadata = isObject(template["metadata"]) ? template["metadata"] : {}
    const name = typeof metadata["name"] === "string" ? metadata["name"] : "(unnamed)"
    const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : ""
    const subject = `Template ${namespace === "" ? "" : `${namespace}/`}${name}`
    if (template["kind"] !== "Template" || !String(template["apiVersion"] ?? "").startsWith("template.openshift.io/")) {
      return yield* new ValidationError({
        subject,
        detail: `is a ${String(template["kind"])} of ${String(template["apiVersion"])}, not a template.openshift.io Template`
      })
    }
    const values = yield* checkParameters(subject, parameters)
    const filled = yield* fill(subject, template, values, namespace)
    const decided = new Map<string, string>()
    for (const parameter of filled["parameters"] as ReadonlyArray<JsonObject>) {
      const value = parameter["value"]
      decided.set(parameter["name"] as string, value === undefined || value === null ? "" : String(value))
    }
    const { objects } = renderWith(filled, decided)
    if (!objects.every(isObject)) {
      return yield* new ValidationError({ subject, detail: "has objects that are not all objects" })
    }
    return objects as ReadonlyArray<Manifests.Manifest>
  })
