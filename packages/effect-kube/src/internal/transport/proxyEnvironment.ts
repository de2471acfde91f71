/**
 * The proxy the environment asks for, as client-go's default transport finds it (Go's
 * `http.ProxyFromEnvironment` with `golang.org/x/net/http/httpproxy` rules):
 *
 * - `HTTPS_PROXY` (else `https_proxy`) for an https server, `HTTP_PROXY` (else
 *   `http_proxy`) for an http one; `NO_PROXY` (else `no_proxy`) lists exceptions.
 * - `localhost` and loopback addresses never go through a proxy.
 * - `NO_PROXY` entries, comma-separated: `*` (no proxy at all); an IP or a CIDR
 *   (`10.0.0.0/8`, `fd00::/8`); a host name, which matches it and its subdomains
 *   (`example.com`); a leading dot or `*.` (`.example.com`), which matches subdomains
 *   only; any of these with `:port` to match that port only.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Net from "node:net"
import * as Url from "node:url"
import type { ProxyOptions, Service } from "../../KubeConfig.js"
import { parseEnvironmentProxy } from "./proxies.js"

/** The variables read, as `Config` or `process.env` gives them. @internal */
export interface ProxyEnvironment {
  readonly HTTPS_PROXY?: string | undefined
  readonly https_proxy?: string | undefined
  readonly HTTP_PROXY?: string | undefined
  readonly http_proxy?: string | undefined
  readonly NO_PROXY?: string | undefined
  readonly no_proxy?: string | undefined
}

/** @internal */
export const environmentNames: ReadonlyArray<keyof ProxyEnvironment> = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "NO_PROXY",
  "no_proxy"
]

const firstSet = (
  ...values: ReadonlyArray<string | undefined>
): { readonly value: string; readonly index: number } | undefined => {
  for (let index = 0; index < values.length; index++) {
    const value = values[index]
    if (value !== undefined && value !== "") return { value, index }
  }
  return undefined
}

/** What to do for a server. `Invalid` names the variable, never its value. @internal */
export type EnvironmentProxy =
  | { readonly _tag: "Direct" }
  | { readonly _tag: "Proxy"; readonly proxy: ProxyOptions; readonly variable: string }
  | { readonly _tag: "Invalid"; readonly detail: string }

const ipType = (host: string): "ipv4" | "ipv6" | undefined => {
  const v = Net.isIP(host)
  return v === 4 ? "ipv4" : v === 6 ? "ipv6" : undefined
}

const loopback = (() => {
  const list = new Net.BlockList()
  list.addSubnet("127.0.0.0", 8, "ipv4")
  list.addAddress("::1", "ipv6")
  return list
})()

type Matcher = (host: string, port: string, ip: "ipv4" | "ipv6" | undefined) => boolean

/** Splits `host:port`, `[v6]:port`, leaving anything else as a host. */
const splitHostPort = (entry: string): { readonly host: string; readonly port: string } | undefined => {
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(entry)
  if (bracketed !== null) return { host: bracketed[1]!, port: bracketed[2] ?? "" }
  const colons = entry.split(":").length - 1
  if (colons === 1) {
    const [host, port] = entry.split(":") as [string, string]
    if (host === "") return undefined
    return { host, port }
  }
  return { host: entry, port: "" }
}

/** The `NO_PROXY` rules; `undefined` for `*`. @internal */
export const noProxyMatchers = (noProxy: string): ReadonlyArray<Matcher> | undefined => {
  const matchers: Array<Matcher> = []
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase()
    if (entry === "") continue
    if (entry === "*") return undefined
    const slash = entry.indexOf("/")
    if (slash !== -1) {
      const base = entry.slice(0, slash)
      const prefix = Number(entry.slice(slash + 1))
      const type = ipType(base)
      if (type === undefined || !/^\d+$/.test(entry.slice(slash + 1))) continue
      if (prefix > (type === "ipv4" ? 32 : 128)) continue
      const list = new Net.BlockList()
      list.addSubnet(base, prefix, type)
      matchers.push((host, _port, ip) => ip !== undefined && list.check(host, ip))
      continue
    }
    const split = splitHostPort(entry)
    if (split === undefined || split.host === "") continue
    const { port } = split
    const type = ipType(split.host)
    if (type !== undefined) {
      const list = new Net.BlockList()
      list.addAddress(split.host, type)
      matchers.push((host, p, ip) => ip !== undefined && list.check(host, ip) && (port === "" || port === p))
      continue
    }
    let domain = split.host.startsWith("*.") ? split.host.slice(1) : split.host
    const matchHost = !domain.startsWith(".")
    if (matchHost) domain = `.${domain}`
    const ascii = Url.domainToASCII(domain.slice(1))
    if (ascii !== "") domain = `.${ascii}`
    matchers.push((host, p) =>
      (host.endsWith(domain) || (matchHost && host === domain.slice(1))) && (port === "" || port === p)
    )
  }
  return matchers
}

/** Whether a request to `host:port` goes through the proxy, under `NO_PROXY`. @internal */
export const useProxy = (noProxy: string, host: string, port: string): boolean => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  const name = bare.toLowerCase()
  if (name === "localhost") return false
  const ip = ipType(name)
  if (ip !== undefined && loopback.check(name, ip)) return false
  const matchers = noProxyMatchers(noProxy)
  if (matchers === undefined) return false
  return !matchers.some((match) => match(name, port, ip))
}

/** The proxy the environment gives a server, if any. @internal */
export const forServer = (env: ProxyEnvironment, server: URL): EnvironmentProxy => {
  const https = server.protocol === "https:"
  const chosen = https
    ? firstSet(env.HTTPS_PROXY, env.https_proxy)
    : firstSet(env.HTTP_PROXY, env.http_proxy)
  if (chosen === undefined) return { _tag: "Direct" }
  const variable = (https ? ["HTTPS_PROXY", "https_proxy"] : ["HTTP_PROXY", "http_proxy"])[chosen.index]!
  const port = server.port !== "" ? server.port : https ? "443" : "80"
  if (!useProxy(firstSet(env.NO_PROXY, env.no_proxy)?.value ?? "", server.hostname, port)) return { _tag: "Direct" }
  return Result.match(parseEnvironmentProxy(chosen.value), {
    onFailure: (problem) => ({ _tag: "Invalid", detail: `${variable} ${problem}` }),
    onSuccess: (proxy) => ({ _tag: "Proxy", proxy, variable })
  })
}

/** The proxy variables, through `Config` (the environment by default; a test may provide others). */
const readEnvironment: Effect.Effect<ProxyEnvironment> = Effect.map(
  Effect.forEach(
    environmentNames,
    (name) => Effect.map(Effect.orElseSucceed(Config.String(name), () => ""), (value) => [name, value] as const)
  ),
  (entries) => Object.fromEntries(entries) as ProxyEnvironment
)

/**
 * How every transport reaches the cluster: through its own proxy (`proxy-url`), else the one
 * the environment gives it by client-go's rules, else directly. `problem` says why a proxy
 * variable cannot be used (naming the variable, never its value); requests to the cluster
 * then fail with it rather than go around the proxy. @internal
 */
export const clusterProxy = (
  config: Service
): Effect.Effect<{ readonly proxy?: ProxyOptions | undefined; readonly problem?: string | undefined }> => {
  if (config.proxy !== undefined) return Effect.succeed({ proxy: config.proxy })
  let server: URL
  try {
    server = new URL(config.server)
  } catch {
    return Effect.succeed({})
  }
  return Effect.map(readEnvironment, (env) => {
    const found = forServer(env, server)
    return found._tag === "Proxy"
      ? { proxy: found.proxy }
      : found._tag === "Invalid"
      ? { problem: found.detail }
      : {}
  })
}
