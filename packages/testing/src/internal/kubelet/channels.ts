/**
 * What the fake's streaming sessions (exec, attach, port-forward) share: the far end of
 * a connection (`Peer`), what a transport feeds a session (`Session`), and the channel
 * framings of the Kubernetes WebSocket subprotocols, as the kubelet's `wsstream` writes
 * them: binary messages with a channel byte first (`channel.k8s.io`, `v4.`, `v5.`), or
 * text messages with the channel as an ASCII digit and base64 data (`base64.`
 * variants), in both directions.
 *
 * @internal
 */

/** The far end of one connection: binary data, or text (a base64 subprotocol's messages). @internal */
export interface Peer {
  readonly send: (data: Uint8Array | string) => Promise<void>
  readonly close: () => void
}

/** What the transport feeds a session. @internal */
export interface Session {
  readonly receive: (data: Uint8Array) => void
  readonly closed: () => void
}

/** One channel framing. @internal */
export interface Codec {
  readonly encode: (channel: number, data: Uint8Array) => Uint8Array | string
  /** A message as channel and data; `undefined` when it is empty or not readable. */
  readonly decode: (message: Uint8Array) => { readonly channel: number; readonly data: Uint8Array } | undefined
}

/** `channel.k8s.io` and its versions: a channel byte, then the data. @internal */
export const binary: Codec = {
  encode: (channel, data) => {
    const out = new Uint8Array(data.length + 1)
    out[0] = channel
    out.set(data, 1)
    return out
  },
  decode: (message) => (message.length === 0 ? undefined : { channel: message[0]!, data: message.subarray(1) })
}

const decoder = new TextDecoder()

/** `base64.channel.k8s.io` and its versions: `'0' + channel`, then the data in base64. @internal */
export const base64: Codec = {
  encode: (channel, data) => String.fromCharCode(48 + channel) + Buffer.from(data).toString("base64"),
  decode: (message) => {
    if (message.length === 0) return undefined
    const text = decoder.decode(message.subarray(1))
    // the kubelet drops a message whose data is not base64
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined
    return { channel: message[0]! - 48, data: Buffer.from(text, "base64") }
  }
}

/** The framing of a subprotocol (no subprotocol is the binary one). @internal */
export const codecOf = (protocol: string): Codec => (protocol.includes("base64.") ? base64 : binary)
