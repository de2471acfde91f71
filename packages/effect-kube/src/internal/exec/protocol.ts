/**
 * The Kubernetes WebSocket channel protocol (`v5.channel.k8s.io`, `v4.channel.k8s.io`),
 * as pure functions: every binary message starts with a channel byte; exec and attach
 * use 0 stdin, 1 stdout, 2 stderr, 3 status (a metav1.Status as JSON), 4 resize, and
 * under v5 255 close (its one data byte is the channel to close). Port-forward uses two
 * channels per port (data, error), the server's first frame on each carrying the port
 * as two little-endian bytes.
 */
import type { Status } from "../../Errors.js"

/** @internal */
export const v5 = "v5.channel.k8s.io"
/** @internal */
export const v4 = "v4.channel.k8s.io"
/** The subprotocols offered for exec and attach, preferred first. @internal */
export const execProtocols: ReadonlyArray<string> = [v5, v4]
/** The subprotocol offered for port-forward. @internal */
export const portForwardProtocols: ReadonlyArray<string> = [v4]

/** @internal */
export type Protocol = typeof v5 | typeof v4

/** @internal */
export const Channel = {
  stdin: 0,
  stdout: 1,
  stderr: 2,
  status: 3,
  resize: 4,
  close: 255
} as const

/** One message: the channel byte, then the data. @internal */
export const frame = (channel: number, data: Uint8Array): Uint8Array => {
  const out = new Uint8Array(data.length + 1)
  out[0] = channel
  out.set(data, 1)
  return out
}

/** The v5 message that closes one of the client's channels (stdin). @internal */
export const closeFrame = (channel: number): Uint8Array => Uint8Array.of(Channel.close, channel)

const encoder = new TextEncoder()

/** A terminal size, as the kubelet reads it. @internal */
export const resizeFrame = (columns: number, rows: number): Uint8Array =>
  frame(Channel.resize, encoder.encode(JSON.stringify({ Width: columns, Height: rows })))

/** The two bytes that open each port-forward channel. @internal */
export const portPrefix = (port: number): Uint8Array => Uint8Array.of(port & 0xff, (port >> 8) & 0xff)

/** Reads a port prefix. @internal */
export const readPort = (data: Uint8Array): number | undefined =>
  data.length < 2 ? undefined : data[0]! | (data[1]! << 8)

/** What the status channel said. @internal */
export type Outcome =
  | { readonly _tag: "Exited"; readonly exitCode: number }
  | { readonly _tag: "Failed"; readonly status: Status }

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/**
 * Reads the status channel: `Success` is exit 0; `Failure` with reason
 * `NonZeroExitCode` carries the exit code as the message of its `ExitCode` cause; any
 * other Status (or text that is not one) is a failure of the call itself.
 *
 * @internal
 */
export const parseStatus = (text: string): Outcome => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Failed", status: { status: "Failure", message: `status channel sent text that is not JSON (${text.length} bytes)` } }
  }
  if (!isObject(parsed)) return { _tag: "Failed", status: { status: "Failure", message: "status channel sent no Status" } }
  const status = parsed as Status
  if (status.status === "Success") return { _tag: "Exited", exitCode: 0 }
  if (status.reason === "NonZeroExitCode") {
    const cause = status.details?.causes?.find((c) => c.reason === "ExitCode")
    const code = cause?.message === undefined ? NaN : Number(cause.message)
    if (Number.isInteger(code)) return { _tag: "Exited", exitCode: code }
  }
  return { _tag: "Failed", status }
}

/** The Status a server sends for an exit code (Success for 0). @internal */
export const statusFor = (exitCode: number, command: ReadonlyArray<string>): Status =>
  exitCode === 0
    ? { metadata: {}, status: "Success" }
    : {
      metadata: {},
      status: "Failure",
      message: `command terminated with non-zero exit code: error executing command [${
        command.join(" ")
      }], exit code ${exitCode}`,
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] }
    }

/** The query of an exec or attach request. @internal */
export const streamQuery = (options: {
  readonly command?: ReadonlyArray<string> | undefined
  readonly container?: string | undefined
  readonly stdin: boolean
  readonly stdout: boolean
  readonly stderr: boolean
  readonly tty: boolean
}): string => {
  const params = new URLSearchParams()
  for (const arg of options.command ?? []) params.append("command", arg)
  if (options.container !== undefined) params.append("container", options.container)
  params.append("stdin", String(options.stdin))
  params.append("stdout", String(options.stdout))
  // under a tty stderr is merged into stdout, and the kubelet refuses both at once
  params.append("stderr", String(options.stderr && !options.tty))
  params.append("tty", String(options.tty))
  return params.toString()
}
