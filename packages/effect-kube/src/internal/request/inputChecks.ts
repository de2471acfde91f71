/**
 * Checks of names, namespaces and selectors, done before any request so that bad input
 * never reaches the server (and never builds a path that means something else).
 */
import * as Effect from "effect/Effect"
import { ValidationError } from "../../Errors.js"
import { KubeConfig } from "../../KubeConfig.js"
import type * as Resource from "../../Resource.js"

const maxNameLength = 253
const namespacePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * A name every check below lets through (a DNS subdomain's characters, starting with a letter
 * or digit): one test for the names objects have, for this runs for every named operation.
 */
const plainName = /^[a-z0-9][-a-z0-9.]*$/

/** Why a name cannot be used in a path, or undefined when it can. */
export const nameProblem = (name: unknown): string | undefined => {
  if (typeof name !== "string") return "must be a string"
  if (name.length <= maxNameLength && plainName.test(name)) return undefined
  if (name === "") return "must not be empty"
  if (name === "." || name === "..") return `must not be "${name}"`
  if (name.includes("/")) return `must not contain "/" (got ${JSON.stringify(name)})`
  if (name.includes("%")) return `must not contain "%" (got ${JSON.stringify(name)})`
  // A URL parser reads these as structure: "\\" as "/" (so "..\\secrets\\x" climbs out of the
  // collection), "?" as the start of the query and "#" of the fragment.
  const structural = /[\\?#]/.exec(name)
  if (structural !== null) return `must not contain ${JSON.stringify(structural[0])} (got ${JSON.stringify(name)})`
  if (name.length > maxNameLength) return `must be at most ${maxNameLength} characters (got ${name.length})`
  // A URL encodes a lone surrogate as U+FFFD, which would name another object.
  if (loneSurrogate.test(name)) return `must be well-formed Unicode (got ${JSON.stringify(name)})`
  if (/[\s\u0000-\u001f]/.test(name)) return `must not contain whitespace or control characters (got ${JSON.stringify(name)})`
  return undefined
}

/** Why a namespace is not a DNS-1123 label, or undefined when it is one. */
export const namespaceProblem = (namespace: unknown): string | undefined => {
  if (typeof namespace !== "string") return "must be a string"
  if (namespace === "") return "must not be empty"
  if (namespace.length > 63) return `must be at most 63 characters (got ${namespace.length})`
  if (!namespacePattern.test(namespace)) {
    return `must be a DNS-1123 label (lower-case letters, digits and "-") (got ${JSON.stringify(namespace)})`
  }
  return undefined
}

/** Fails with a ValidationError naming the subject when the name cannot be used. */
export const checkName = (name: unknown, subject = "name"): Effect.Effect<string, ValidationError> => {
  const problem = nameProblem(name)
  return problem === undefined
    ? Effect.succeed(name as string)
    : Effect.fail(new ValidationError({ subject, detail: problem }))
}

/** Fails with a ValidationError naming the subject when the namespace cannot be used. */
export const checkNamespace = (namespace: unknown, subject = "namespace"): Effect.Effect<string, ValidationError> => {
  const problem = namespaceProblem(namespace)
  return problem === undefined
    ? Effect.succeed(namespace as string)
    : Effect.fail(new ValidationError({ subject, detail: problem }))
}

/** A positive whole number (or >= 0 with `allowZero`), or undefined. */
export const checkPositive = (
  value: number | undefined,
  subject: string,
  allowZero = false
): Effect.Effect<void, ValidationError> =>
  value === undefined || (Number.isSafeInteger(value) && (allowZero ? value >= 0 : value > 0))
    ? Effect.void
    : Effect.fail(
      new ValidationError({
        subject,
        detail: `must be a ${allowZero ? "whole number >= 0" : "positive whole number"} (got ${value})`
      })
    )

/** Everything an operation needs to know about where it acts. */
export interface Target<A, I> {
  readonly resource: Resource.Resource<A, I, string>
  /** The namespace given to `api`, unchecked. */
  readonly namespace: string | undefined
}

/** Where an operation's namespace comes from when the target names none: the KubeConfig's. */
const fromKubeConfig: unique symbol = Symbol("fromKubeConfig")

/** The namespace of a target, without an Effect: checked, or the KubeConfig's to look up. */
const namespaceOf = (
  target: { readonly resource: Pick<Resource.Info, "kind" | "namespaced">; readonly namespace: string | undefined },
  allNamespaces?: boolean | undefined
): string | undefined | ValidationError | typeof fromKubeConfig => {
  const { namespace, resource } = target
  if (!resource.namespaced) {
    return namespace === undefined ? undefined : new ValidationError({
      subject: "namespace",
      detail: `${resource.kind} is cluster-scoped, so no namespace may be given (got ${JSON.stringify(namespace)})`
    })
  }
  if (allNamespaces === true) return undefined
  if (namespace === undefined) return fromKubeConfig
  const problem = namespaceProblem(namespace)
  return problem === undefined ? namespace : new ValidationError({ subject: "namespace", detail: problem })
}

const namespaceFromKubeConfig: Effect.Effect<string, ValidationError, KubeConfig> = Effect.flatMap(
  KubeConfig,
  (config) => checkNamespace(config.namespace, "namespace (from the kubeconfig)")
)

/**
 * The namespace an operation acts in: `undefined` for cluster-scoped kinds and for
 * all-namespaces reads, else the given one or the KubeConfig's, checked.
 */
export const resolveNamespace = (
  target: { readonly resource: Pick<Resource.Info, "kind" | "namespaced">; readonly namespace: string | undefined },
  allNamespaces?: boolean | undefined
): Effect.Effect<string | undefined, ValidationError, KubeConfig> => {
  const namespace = namespaceOf(target, allNamespaces)
  return namespace === fromKubeConfig
    ? namespaceFromKubeConfig
    : namespace instanceof ValidationError
    ? Effect.fail(namespace)
    : Effect.succeed(namespace)
}

/** The name checked, in the namespace found (the subject is written only for a name that fails). */
const namedIn = (
  target: { readonly resource: Pick<Resource.Info, "kind" | "namespaced"> },
  namespace: string | undefined,
  name: string
): Effect.Effect<string | undefined, ValidationError> => {
  const problem = nameProblem(name)
  return problem === undefined ? Effect.succeed(namespace) : Effect.fail(
    new ValidationError({
      subject: `${target.resource.kind} ${namespace === undefined ? "" : `${namespace}/`}${String(name)}: name`,
      detail: problem
    })
  )
}

/**
 * The namespace of an operation on one named object, and the name checked: one Effect
 * when the target gives its namespace (this runs for every named operation).
 */
export const resolveNamed = (
  target: { readonly resource: Pick<Resource.Info, "kind" | "namespaced">; readonly namespace: string | undefined },
  name: string
): Effect.Effect<string | undefined, ValidationError, KubeConfig> => {
  const namespace = namespaceOf(target)
  return namespace === fromKubeConfig
    ? Effect.flatMap(namespaceFromKubeConfig, (found) => namedIn(target, found, name))
    : namespace instanceof ValidationError
    ? Effect.fail(namespace)
    : namedIn(target, namespace, name)
}
