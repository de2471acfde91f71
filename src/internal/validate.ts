/**
 * Checks of names, namespaces and selectors, done before any request so that bad input
 * never reaches the server (and never builds a path that means something else).
 */
import * as Effect from "effect/Effect"
import { ValidationError } from "../Errors.js"

const maxNameLength = 253
const namespacePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a name cannot be used in a path, or undefined when it can. */
export const nameProblem = (name: unknown): string | undefined => {
  if (typeof name !== "string") return "must be a string"
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
