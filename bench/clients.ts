/**
 * The three clients the benchmarks compare, behind one small interface:
 *
 * - `floor`: `node:https` with a keep-alive agent and `JSON.parse`, nothing else (no
 *   validation, no typed objects): the least any client can do;
 * - `effect-kube`: `Kube.api(Pods, { namespace })` over `NodeKube.layerFromFile`;
 * - `client-node`: `@kubernetes/client-node`'s `CoreV1Api`, `Watch` and `Log`.
 *
 * Every client does the same work per measurement: a list keeps every decoded item, a
 * watch hands every event to the caller, a log follow hands every line (without its
 * newline) to the caller. effect-kube is consumed as its users write it: a watch with
 * `Stream.runForEach`. A follow goes one of two ways (`via`), which only effect-kube tells
 * apart: `lines` takes its lines from `logStream` with `Stream.runForEach`, `bytes` takes the
 * byte chunks of `logBytes` (with `Stream.runForEachWhile`) and counts their newline bytes,
 * decoding nothing, as the floor and client-node's `Log` (a Writable) then do too: `bytes` is
 * the byte-counting floor, the least a follow can do, that `lines` is measured against.
 */
import * as k8s from "@kubernetes/client-node"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Https from "node:https"
import { Writable } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import * as Zlib from "node:zlib"
import * as Kube from "../packages/effect-kube/src/Kube.js"
import * as KubeConfig from "../packages/effect-kube/src/KubeConfig.js"
import * as NodeKube from "../packages/effect-kube/src/NodeKube.js"
import { Pods } from "../packages/effect-kube/src/resources/index.js"

/**
 * What `onLine` is called with, once per newline byte, by a follow `via: "bytes"`: the bytes are
 * counted, not decoded, so there is no line to hand on.
 */
export const countedLine = "(a line, counted by its newline byte)"

/** The newline bytes of `bytes` (memchr, by `Buffer.indexOf`), at most `max`; calls `onLine` for each. */
const countLines = (bytes: Uint8Array, max: number, onLine: (line: string) => void): number => {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let seen = 0
  let at = 0
  while (seen < max && (at = buffer.indexOf(10, at)) !== -1) {
    onLine(countedLine)
    seen++
    at++
  }
  return seen
}

/** Where the server is and how to reach it (the kubeconfig says the same). */
export interface Target {
  readonly kubeconfig: string
  readonly server: string
  readonly ca: string
  /** A bearer token (the fake's), or none when the user has a client certificate (`cert` and `key`, PEM). */
  readonly token?: string | undefined
  readonly cert?: string | undefined
  readonly key?: string | undefined
  /** The floor asks for gzip (`Accept-Encoding: gzip`) and gunzips what comes gzipped (`list-gzip`, `list-slow`). */
  readonly floorGzip?: boolean | undefined
}

/** `effect-kube-h1`: effect-kube with HTTP/2 turned off (`http2: false`), for the HTTP/2 table's side-by-side rows. */
export type ClientName = "floor" | "effect-kube" | "effect-kube-h1" | "client-node"

export interface Client {
  /** Loads the configuration and builds what the client needs before its first request. */
  readonly init: () => Promise<void>
  /** Every pod of the namespace, fetched in pages of `pageSize`, fully decoded. */
  readonly listAll: (namespace: string, pageSize: number) => Promise<ReadonlyArray<unknown>>
  /** One pod. */
  readonly get: (namespace: string, name: string) => Promise<unknown>
  /**
   * Watches the namespace from `resourceVersion` and calls `onEvent` with each event's
   * type and object until `count` events have arrived.
   */
  readonly watch: (
    namespace: string,
    resourceVersion: string,
    count: number,
    onEvent: (type: string, object: unknown) => void
  ) => Promise<void>
  /**
   * Follows container `app` of a pod's log, calling `onLine` with each line until `count` lines
   * (`via: "bytes"`: with `countedLine` for each newline byte, nothing decoded).
   */
  readonly follow: (
    namespace: string,
    name: string,
    count: number,
    via: "lines" | "bytes",
    onLine: (line: string) => void
  ) => Promise<void>
  readonly close: () => Promise<void>
}

// ---------------------------------------------------------------------------------------------------------------
// floor

const floor = (target: Target): Client => {
  const agent = new Https.Agent({
    keepAlive: true,
    ca: target.ca,
    ...(target.cert === undefined ? {} : { cert: target.cert, key: target.key })
  })
  const headers: Record<string, string> = {
    ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
    accept: "application/json",
    ...(target.floorGzip === true ? { "accept-encoding": "gzip" } : {})
  }

  const request = (path: string): Promise<import("node:http").IncomingMessage> =>
    new Promise((resolve, reject) => {
      const req = Https.get(`${target.server}${path}`, { agent, headers }, (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          reject(new Error(`floor: GET ${path}: ${res.statusCode}`))
        } else resolve(res)
      })
      req.on("error", reject)
    })

  const json = async (path: string): Promise<unknown> => {
    const res = await request(path)
    const body = res.headers["content-encoding"] === "gzip" ? res.pipe(Zlib.createGunzip()) : res
    const chunks: Array<Buffer> = []
    for await (const chunk of body) chunks.push(chunk as Buffer)
    return JSON.parse(Buffer.concat(chunks).toString("utf8"))
  }

  /** Calls `onLine` for each line of the body until it returns false; then drops the connection. */
  const lines = async (path: string, onLine: (line: string) => boolean): Promise<void> => {
    const res = await request(path)
    res.setEncoding("utf8")
    let pending = ""
    for await (const chunk of res) {
      const text = pending + (chunk as string)
      let start = 0
      let newline: number
      while ((newline = text.indexOf("\n", start)) !== -1) {
        if (!onLine(text.slice(start, newline))) {
          res.destroy()
          return
        }
        start = newline + 1
      }
      pending = text.slice(start)
    }
  }

  /** Counts the newline bytes of the body until `count`; then drops the connection. */
  const counted = async (path: string, count: number, onLine: (line: string) => void): Promise<void> => {
    const res = await request(path)
    let seen = 0
    for await (const chunk of res) {
      seen += countLines(chunk as Buffer, count - seen, onLine)
      if (seen >= count) {
        res.destroy()
        return
      }
    }
  }

  return {
    init: async () => {},
    listAll: async (namespace, pageSize) => {
      const items: Array<unknown> = []
      let cont: string | undefined = undefined
      do {
        const query: string = `limit=${pageSize}${cont === undefined ? "" : `&continue=${encodeURIComponent(cont)}`}`
        const page = await json(`/api/v1/namespaces/${namespace}/pods?${query}`) as {
          items: Array<unknown>
          metadata: { continue?: string }
        }
        for (const item of page.items) items.push(item)
        cont = page.metadata.continue || undefined
      } while (cont !== undefined)
      return items
    },
    get: (namespace, name) => json(`/api/v1/namespaces/${namespace}/pods/${name}`),
    watch: (namespace, resourceVersion, count, onEvent) => {
      let seen = 0
      return lines(
        `/api/v1/namespaces/${namespace}/pods?watch=true&resourceVersion=${resourceVersion}`,
        (line) => {
          const event = JSON.parse(line) as { type: string; object: unknown }
          onEvent(event.type, event.object)
          return ++seen < count
        }
      )
    },
    follow: (namespace, name, count, via, onLine) => {
      const path = `/api/v1/namespaces/${namespace}/pods/${name}/log?follow=true&container=app`
      if (via === "bytes") return counted(path, count, onLine)
      let seen = 0
      return lines(path, (line) => {
        onLine(line)
        return ++seen < count
      })
    },
    close: async () => agent.destroy()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// effect-kube

/**
 * `BENCH_MAX_CONNECTIONS` sets effect-kube's cap on connections for short requests
 * (`NodeKube.Options.maxConnections`; a number or `Infinity`), to compare caps; unset, the default.
 */
const maxConnections = process.env["BENCH_MAX_CONNECTIONS"]

const effectKube = (target: Target, http2: boolean): Client => {
  const kubeConfig = KubeConfig.layerFromFile({ path: target.kubeconfig })
  const runtime = ManagedRuntime.make(
    NodeKube.layerFromKubeConfig(kubeConfig, {
      ...(maxConnections === undefined || maxConnections === "" ? {} : { maxConnections: Number(maxConnections) }),
      ...(http2 ? {} : { http2: false })
    })
  )
  const apis = new Map<string, Kube.Api<typeof Pods.schema.Type, "log">>()
  const api = (namespace: string) => {
    let found = apis.get(namespace)
    if (found === undefined) {
      found = Kube.api(Pods, { namespace })
      apis.set(namespace, found)
    }
    return found
  }
  return {
    // The layer (kubeconfig file, TLS agents) is built on first use otherwise.
    init: async () => {
      await runtime.context()
    },
    listAll: (namespace, pageSize) =>
      runtime.runPromise(Effect.gen(function*() {
        const pods = api(namespace)
        const items: Array<unknown> = []
        let cont: string | undefined = undefined
        do {
          const page: Kube.ListResult<unknown> = yield* pods.list({ limit: pageSize, continue: cont })
          for (const item of page.items) items.push(item)
          cont = page.metadata.continue
        } while (cont !== undefined)
        return items
      })),
    get: (namespace, name) => runtime.runPromise(Effect.map(api(namespace).get(name), Option.getOrThrow)),
    watch: (namespace, resourceVersion, count, onEvent) =>
      runtime.runPromise(
        api(namespace).watch({ resourceVersion }).pipe(
          Stream.take(count),
          Stream.runForEach((event) =>
            Effect.sync(() => onEvent(event.type, event.type === "BOOKMARK" ? undefined : event.object))
          )
        )
      ),
    follow: (namespace, name, count, via, onLine) =>
      runtime.runPromise(
        via === "lines"
          ? api(namespace).logStream(name, { container: "app" }).pipe(
            Stream.take(count),
            Stream.runForEach((line) => Effect.sync(() => onLine(line)))
          )
          : Effect.suspend(() => {
            let seen = 0
            return api(namespace).logBytes(name, { container: "app" }).pipe(
              Stream.runForEachWhile((bytes) =>
                Effect.sync(() => {
                  seen += countLines(bytes, count - seen, onLine)
                  return seen < count
                })
              )
            )
          })
      ),
    close: () => runtime.dispose()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// @kubernetes/client-node

const clientNode = (target: Target): Client => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(target.kubeconfig)
  const core = kc.makeApiClient(k8s.CoreV1Api)
  const watcher = new k8s.Watch(kc)
  const log = new k8s.Log(kc)
  return {
    init: async () => {},
    listAll: async (namespace, pageSize) => {
      const items: Array<unknown> = []
      let cont: string | undefined = undefined
      do {
        const page: k8s.V1PodList = await core.listNamespacedPod({
          namespace,
          limit: pageSize,
          ...(cont === undefined ? {} : { _continue: cont })
        })
        for (const item of page.items) items.push(item)
        cont = page.metadata?._continue || undefined
      } while (cont !== undefined)
      return items
    },
    get: (namespace, name) => core.readNamespacedPod({ namespace, name }),
    watch: (namespace, resourceVersion, count, onEvent) =>
      new Promise<void>((resolve, reject) => {
        let seen = 0
        let controller: AbortController | undefined
        let finished = false
        watcher.watch(
          `/api/v1/namespaces/${namespace}/pods`,
          { resourceVersion },
          (type, object) => {
            if (finished) return
            onEvent(type, object)
            if (++seen >= count) {
              finished = true
              controller?.abort()
              resolve()
            }
          },
          (error) => {
            if (!finished) {
              finished = true
              if (error) reject(error)
              else reject(new Error(`client-node: watch ended after ${seen} events`))
            }
          }
        ).then((c) => {
          controller = c
          if (finished) c.abort()
        }, reject)
      }),
    follow: (namespace, name, count, via, onLine) =>
      new Promise<void>((resolve, reject) => {
        let seen = 0
        let pending = ""
        let finished = false
        const decoder = new StringDecoder("utf8")
        // Not aborted when done: client-node leaves the aborted body's error unhandled, which
        // kills the process. The follow stays open, idle, until the process exits.
        const done = () => {
          finished = true
          resolve()
        }
        const sink = new Writable({
          decodeStrings: false,
          write(chunk: Buffer | string, _encoding, callback) {
            if (finished) return callback()
            if (via === "bytes" && typeof chunk !== "string") {
              seen += countLines(chunk, count - seen, onLine)
              if (seen >= count) done()
              return callback()
            }
            const text = pending + (typeof chunk === "string" ? chunk : decoder.write(chunk))
            let start = 0
            let newline: number
            while ((newline = text.indexOf("\n", start)) !== -1) {
              onLine(text.slice(start, newline))
              start = newline + 1
              if (++seen >= count) {
                done()
                return callback()
              }
            }
            pending = text.slice(start)
            callback()
          }
        })
        sink.on("error", () => {})
        log.log(namespace, name, "app", sink, { follow: true }).catch(reject)
      }),
    close: async () => {}
  }
}

export const make = (name: ClientName, target: Target): Client =>
  name === "floor"
    ? floor(target)
    : name === "effect-kube" || name === "effect-kube-h1"
    ? effectKube(target, name === "effect-kube")
    : clientNode(target)
