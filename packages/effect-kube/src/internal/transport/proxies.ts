/**
 * Proxy URLs, as a kubeconfig's `proxy-url` and the `*_PROXY` environment variables give
 * them. Pure: no I/O. A problem is described without quoting the URL, which may carry a
 * password.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import type { ProxyOptions } from "../../KubeConfig.js"

/** The schemes kubectl accepts in `proxy-url` (client-go's `parseProxyURL`). @internal */
export const proxySchemes: ReadonlyArray<string> = ["http:", "https:", "socks5:"]

const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/**
 * Splits a proxy URL into its printable part (`scheme://host:port`) and its `Redacted`
 * credentials. `socks5h` (a SOCKS5 proxy resolving names, which is how SOCKS5 proxies
 * are used here anyway) is read as `socks5`. A failure: what is wrong, never the URL.
 *
 * @internal
 */
export const parseProxyUrl = (
  text: string,
  schemes: ReadonlyArray<string> = proxySchemes
): Result.Result<ProxyOptions, string> => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return Result.fail("is not a URL (expected http://host:port, https://host:port or socks5://host:port)")
  }
  const protocol = url.protocol === "socks5h:" && schemes.includes("socks5h:") ? "socks5:" : url.protocol
  if (!schemes.includes(url.protocol)) {
    return Result.fail(
      `has the scheme ${
        JSON.stringify(url.protocol.replace(/:$/, ""))
      }: it must be http, https or socks5 (as kubectl requires)`
    )
  }
  if (url.hostname === "") return Result.fail("has no host")
  // Special schemes drop a default port from `host`; SOCKS5's default is 1080.
  const host = protocol === "socks5:" && url.port === "" ? `${url.host}:1080` : url.host
  if (url.username === "" && url.password === "") return Result.succeed({ url: `${protocol}//${host}` })
  const username = decode(url.username)
  const password = decode(url.password)
  if (username === undefined || password === undefined) {
    return Result.fail("has credentials that are not valid percent-encoding")
  }
  return Result.succeed({ url: `${protocol}//${host}`, credentials: Redacted.make({ username, password }) })
}

/**
 * A proxy URL from the environment, read as Go's `httpproxy` reads it: a value without
 * a scheme (`proxy:3128`) is an http proxy.
 *
 * @internal
 */
export const parseEnvironmentProxy = (text: string): Result.Result<ProxyOptions, string> => {
  const schemes = [...proxySchemes, "socks5h:"]
  let direct: URL | undefined
  try {
    direct = new URL(text)
  } catch {
    direct = undefined
  }
  const candidate = direct === undefined || direct.host === "" ? `http://${text}` : text
  return parseProxyUrl(candidate, schemes)
}

/**
 * The proxy's URL with its credentials in it (`http://user:password@host:port`), for a `fetch`
 * whose only way to take them is the URL (Bun's `proxy`). Never logged. @internal
 */
export const proxyUrlWithCredentials = (proxy: ProxyOptions): string => {
  if (proxy.credentials === undefined) return proxy.url
  const { password, username } = Redacted.value(proxy.credentials)
  const url = new URL(proxy.url)
  url.username = encodeURIComponent(username)
  url.password = encodeURIComponent(password)
  return url.href.replace(/\/$/, "")
}
