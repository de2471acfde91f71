/**
 * The string rules of k8s.io/apimachinery's `util/validation` (DNS labels and
 * subdomains, qualified names, label values, config keys, environment variable names,
 * port names and numbers, percentages), each answering the messages the API server
 * prints, none when the value is fine.
 *
 * @internal
 */

/** `msg (e.g. 'a',  or 'b', regex used for validation is 're')`, as `RegexError` words it. */
const regexError = (msg: string, fmt: string, ...examples: ReadonlyArray<string>): string => {
  let s = `${msg} (e.g. `
  examples.forEach((e, i) => {
    if (i > 0) s += " or "
    s += `'${e}', `
  })
  return `${s}regex used for validation is '${fmt}')`
}

/** @internal */
export const maxLenError = (length: number): string => `must be no more than ${length} characters`

/** @internal */
export const emptyError = "must be non-empty"

/** @internal */
export const inclusiveRangeError = (lo: number, hi: number): string => `must be between ${lo} and ${hi}, inclusive`

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`
const dns1123Label = new RegExp(`^${dns1123LabelFmt}$`)
const dns1123Subdomain = new RegExp(`^${dns1123SubdomainFmt}$`)

/** @internal */
export const isDns1123Label = (value: string): Array<string> => {
  const out: Array<string> = []
  if (value.length > 63) out.push(maxLenError(63))
  if (!dns1123Label.test(value)) {
    out.push(regexError(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and " +
        "end with an alphanumeric character",
      dns1123LabelFmt,
      "my-name",
      "123-abc"
    ))
  }
  return out
}

/** @internal */
export const isDns1123Subdomain = (value: string): Array<string> => {
  const out: Array<string> = []
  if (value.length > 253) out.push(maxLenError(253))
  if (!dns1123Subdomain.test(value)) {
    out.push(regexError(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
        "start and end with an alphanumeric character",
      dns1123SubdomainFmt,
      "example.com"
    ))
  }
  return out
}

const dns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?"
const dns1035Label = new RegExp(`^${dns1035LabelFmt}$`)

/** Service names: an RFC 1035 label. @internal */
export const isDns1035Label = (value: string): Array<string> => {
  const out: Array<string> = []
  if (value.length > 63) out.push(maxLenError(63))
  if (!dns1035Label.test(value)) {
    out.push(regexError(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
        "character, and end with an alphanumeric character",
      dns1035LabelFmt,
      "my-name",
      "abc-123"
    ))
  }
  return out
}

/** What a name in a URL path may not be (RBAC names and the like). @internal */
export const isValidPathSegmentName = (name: string): Array<string> => {
  if (name === "." || name === "..") return [`may not be '${name}'`]
  const out: Array<string> = []
  for (const illegal of ["/", "%"]) if (name.includes(illegal)) out.push(`may not contain '${illegal}'`)
  return out
}

const qualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const qualifiedName = new RegExp(`^${qualifiedNameFmt}$`)
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

/** Label keys, annotation keys, finalizers: `[prefix/]name`. @internal */
export const isQualifiedName = (value: string): Array<string> => {
  const out: Array<string> = []
  const parts = value.split("/")
  let name: string
  if (parts.length === 1) {
    name = parts[0]!
  } else if (parts.length === 2) {
    const prefix = parts[0]!
    name = parts[1]!
    if (prefix.length === 0) out.push(`prefix part ${emptyError}`)
    else for (const msg of isDns1123Subdomain(prefix)) out.push(`prefix part ${msg}`)
  } else {
    return [
      `a qualified name ${
        regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")
      } with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ]
  }
  if (name.length === 0) out.push(`name part ${emptyError}`)
  else if (name.length > 63) out.push(`name part ${maxLenError(63)}`)
  if (!qualifiedName.test(name)) {
    out.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")}`)
  }
  return out
}

const labelValueFmt = `(${qualifiedNameFmt})?`
const labelValue = new RegExp(`^${labelValueFmt}$`)

/** @internal */
export const isValidLabelValue = (value: string): Array<string> => {
  const out: Array<string> = []
  if (value.length > 63) out.push(maxLenError(63))
  if (!labelValue.test(value)) {
    out.push(regexError(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
        "start and end with an alphanumeric character",
      labelValueFmt,
      "MyValue",
      "my_value",
      "12345"
    ))
  }
  return out
}

const configKeyFmt = "[-._a-zA-Z0-9]+"
const configKey = new RegExp(`^${configKeyFmt}$`)

/** ConfigMap and Secret data keys. @internal */
export const isConfigMapKey = (value: string): Array<string> => {
  const out: Array<string> = []
  if (value.length > 253) out.push(maxLenError(253))
  if (!configKey.test(value)) {
    out.push(regexError(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
      configKeyFmt,
      "key.name",
      "KEY_NAME",
      "key-name"
    ))
  }
  if (value === ".") out.push("must not be '.'")
  else if (value === "..") out.push("must not be '..'")
  else if (value.startsWith("..")) out.push("must not start with '..'")
  return out
}

/** Environment variable names (the relaxed rule, GA since 1.34): printable ASCII but `=`. @internal */
export const isEnvVarName = (value: string): Array<string> => {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 0x3d) {
      return ["a valid environment variable name must consist only of printable ASCII characters other than '='"]
    }
  }
  return []
}

/** An IANA service name (container and service port names). @internal */
export const isValidPortName = (port: string): Array<string> => {
  const out: Array<string> = []
  if (port.length > 15) out.push(maxLenError(15))
  if (!/^[-a-z0-9]+$/.test(port)) out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
  if (!/[a-z]/.test(port)) out.push("must contain at least one letter (a-z)")
  if (port.includes("--")) out.push("must not contain consecutive hyphens (-)")
  if (port.length > 0 && (port.startsWith("-") || port.endsWith("-"))) {
    out.push("must not begin or end with a hyphen (-)")
  }
  return out
}

/** @internal */
export const isValidPortNum = (port: number): Array<string> =>
  Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)]

/** @internal */
export const isValidPercent = (percent: string): Array<string> =>
  /^[0-9]+%$/.test(percent)
    ? []
    : [regexError("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%")]

/** @internal */
export const isNegativeErrorMsg = "must be greater than or equal to 0"
