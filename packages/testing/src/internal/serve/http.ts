/**
 * The fake's transport-free request and response: what the in-memory `HttpClient`, the
 * web adapter and the `node:http` adapter hand the fake and get back, with the helpers
 * every handler answers with (JSON and Status bodies, request bodies, query values).
 *
 * @internal
 */
import * as YAML from "yaml"
import * as Status from "./statusBodies.js"
import { cutAfter, fromString, type Sink, type StreamBody } from "./stream.js"

/** @internal */
export interface RawRequest {
  readonly method: string
  /** Path and query, e.g. `/api/v1/pods?limit=5`. */
  readonly url: string
  readonly header: (name: string) => string | undefined
  readonly text: () => Promise<string>
  /** The body as sent, for the binary (protobuf) encoding; where absent, only text bodies are read. */
  readonly bytes?: (() => Promise<Uint8Array>) | undefined
  readonly signal?: AbortSignal | undefined
}

/** @internal */
export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | StreamBody | undefined
  /** Fault injection: reset the connection after this many body bytes (`undefined`: before the answer). */
  readonly reset?: { readonly afterBytes: number | undefined } | undefined
}

/** Thrown (layer) or acted on (serve) when the fake resets a connection. @internal */
export class ConnectionReset extends Error {
  constructor() {
    super("connection reset by the fake cluster (injected fault)")
    this.name = "ConnectionReset"
  }
}

/** @internal */
export const jsonHeaders = { "content-type": "application/json" }

/** @internal */
export const json = (status: number, body: unknown): RawResponse => ({
  status,
  headers: jsonHeaders,
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/** @internal */
export const statusResponse = (error: Status.StatusError): RawResponse => ({
  status: error.code,
  headers: { ...jsonHeaders, ...error.headers },
  body: JSON.stringify(error.body())
})

/** The first value of each query parameter. @internal */
export const firstValues = (params: URLSearchParams): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of params) if (!(k in out)) out[k] = v
  return out
}

/** @internal */
export const isTrue = (v: string | undefined): boolean => v === "true" || v === "1"

/** @internal */
export const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

/** A request body as JSON or YAML (by its content type); `undefined` when empty. @internal */
export const readBody = async (request: RawRequest): Promise<unknown> => {
  const text = await request.text()
  if (text.trim() === "") return undefined
  const type = mediaType(request.header("content-type"))
  if (type === "application/yaml" || type === "application/apply-patch+yaml") {
    try {
      // go-yaml, unlike the YAML 1.2 default, keeps the last of repeated keys (strict decoding reports them)
      return YAML.parse(text, { uniqueKeys: false })
    } catch (e) {
      throw Status.badRequest(`error decoding YAML: ${(e as Error).message}`)
    }
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw Status.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`)
  }
}

const encoder = new TextEncoder()

/** A raw response as a web `Response`; a reset becomes a rejection or an erroring body. @internal */
export const toWebResponse = (raw: RawResponse, signal: AbortSignal | undefined): Response => {
  if (raw.reset !== undefined && raw.reset.afterBytes === undefined) {
    if (raw.body !== undefined && typeof raw.body !== "string") raw.body.cancel()
    throw new ConnectionReset()
  }
  const streaming = raw.body !== undefined && typeof raw.body !== "string"
  if (!streaming && raw.reset === undefined) {
    return new Response(raw.status === 204 ? null : (raw.body as string | undefined) ?? "", {
      status: raw.status,
      headers: raw.headers
    })
  }
  const body: StreamBody = typeof raw.body === "string" || raw.body === undefined
    ? fromString(raw.body ?? "")
    : raw.body
  let finished = false
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let sink: Sink = {
        write(chunk) {
          if (!finished) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk)
        },
        end() {
          if (finished) return
          finished = true
          controller.close()
        },
        fail(error) {
          if (finished) return
          finished = true
          controller.error(error)
        }
      }
      if (raw.reset !== undefined) sink = cutAfter(sink, raw.reset.afterBytes!, () => body.cancel())
      signal?.addEventListener("abort", () => {
        if (finished) return
        finished = true
        body.cancel()
        try {
          controller.error(new Error("aborted"))
        } catch {
          // already closed
        }
      }, { once: true })
      body.start(sink)
    },
    cancel() {
      finished = true
      body.cancel()
    }
  })
  return new Response(stream, { status: raw.status, headers: raw.headers })
}
