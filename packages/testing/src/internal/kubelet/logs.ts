/**
 * Container logs of pods: lines with the time they were written, a partial last line,
 * followers that receive appended text as it comes, and the end of a container.
 *
 * @internal
 */
import { Batcher, type Sink, type StreamBody } from "../serve/stream.js"

/** RFC 3339 with nanoseconds, as the kubelet prefixes lines with `timestamps=true`. @internal */
export const timestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z")

interface Text {
  readonly lines: Array<string>
  readonly times: Array<number>
  partial: string
  partialTime: number
}

const emptyText = (): Text => ({ lines: [], times: [], partial: "", partialTime: 0 })

/** What to read from a log. @internal */
export interface ReadOptions {
  readonly tailLines?: number | undefined
  readonly sinceMs?: number | undefined
  readonly timestamps?: boolean | undefined
  readonly limitBytes?: number | undefined
}

/** @internal */
export class ContainerLog {
  private text: Text = emptyText()
  private previousText: Text | undefined
  ended = false
  exitCode: number | undefined
  readonly followers = new Set<LogFollower>()

  hasPrevious(): boolean {
    return this.previousText !== undefined
  }

  append(chunk: string, at = Date.now()): void {
    if (chunk === "") return
    const t = this.text
    let start = 0
    let lineTime = t.partial === "" ? at : t.partialTime
    for (;;) {
      const nl = chunk.indexOf("\n", start)
      if (nl === -1) break
      t.lines.push(t.partial + chunk.slice(start, nl))
      t.times.push(lineTime)
      t.partial = ""
      lineTime = at
      start = nl + 1
    }
    if (start < chunk.length) {
      if (t.partial === "") t.partialTime = at
      t.partial += chunk.slice(start)
    }
    for (const f of this.followers) f.push(chunk, at)
  }

  appendLines(lines: ReadonlyArray<string>, at = Date.now()): void {
    if (lines.length === 0) return
    const t = this.text
    if (t.partial !== "") {
      this.append(lines.join("\n") + "\n", at)
      return
    }
    for (const line of lines) {
      t.lines.push(line)
      t.times.push(at)
    }
    if (this.followers.size > 0) {
      const chunk = lines.join("\n") + "\n"
      for (const f of this.followers) f.push(chunk, at)
    }
  }

  end(exitCode: number): void {
    this.ended = true
    this.exitCode = exitCode
    for (const f of [...this.followers]) f.finish()
  }

  /** A new instance of the container starts: the current log becomes the previous one. */
  restart(): void {
    this.previousText = this.text
    this.text = emptyText()
    this.ended = false
    this.exitCode = undefined
  }

  read(options: ReadOptions, previous = false): string {
    const t = previous ? this.previousText ?? emptyText() : this.text
    let start = 0
    const total = t.lines.length + (t.partial !== "" ? 1 : 0)
    if (options.sinceMs !== undefined) {
      const since = options.sinceMs
      let lo = 0
      let hi = t.times.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (t.times[mid]! < since) lo = mid + 1
        else hi = mid
      }
      start = lo
    }
    if (options.tailLines !== undefined) start = Math.max(start, total - options.tailLines)
    const includePartial = t.partial !== "" && (options.sinceMs === undefined || t.partialTime >= options.sinceMs) &&
      (options.tailLines === undefined || options.tailLines > 0)
    let out: string
    if (options.timestamps === true) {
      const parts: Array<string> = []
      for (let i = start; i < t.lines.length; i++) parts.push(`${timestamp(t.times[i]!)} ${t.lines[i]}\n`)
      if (includePartial) parts.push(`${timestamp(t.partialTime)} ${t.partial}`)
      out = parts.join("")
    } else {
      out = start >= t.lines.length ? "" : (start === 0 ? t.lines : t.lines.slice(start)).join("\n") + "\n"
      if (includePartial) out += t.partial
    }
    return options.limitBytes !== undefined ? cutBytes(out, options.limitBytes) : out
  }

  /** Whether the text read so far ends at a line boundary (for timestamp prefixes). */
  atLineStart(): boolean {
    return this.text.partial === ""
  }
}

const cutBytes = (text: string, limit: number): string => {
  if (text.length <= limit / 3 || Buffer.byteLength(text) <= limit) return text
  return Buffer.from(text).subarray(0, limit).toString("utf8").replace(/\uFFFD$/, "")
}

/** A `follow=true` log response. @internal */
export class LogFollower implements StreamBody {
  readonly _tag = "Stream"
  private out: Batcher | undefined
  private early: Array<string> | undefined = []
  private earlyEnd = false
  private finished = false
  private lineStart: boolean
  private bytesLeft: number

  constructor(
    private readonly log: ContainerLog,
    initial: string,
    private readonly options: ReadOptions,
    private readonly onClose: (f: LogFollower) => void
  ) {
    this.lineStart = log.atLineStart()
    this.bytesLeft = options.limitBytes ?? Infinity
    log.followers.add(this)
    this.emit(initial)
    if (log.ended) this.finish()
  }

  start(sink: Sink): void {
    this.out = new Batcher(sink)
    const early = this.early ?? []
    this.early = undefined
    for (const chunk of early) this.out.write(chunk)
    if (this.earlyEnd) this.out.end()
  }

  cancel(): void {
    this.detach()
    this.out?.abandon()
  }

  push(chunk: string, at: number): void {
    if (this.finished) return
    if (this.options.timestamps !== true) {
      this.emit(chunk)
      return
    }
    const stamp = `${timestamp(at)} `
    let text = ""
    let start = 0
    for (;;) {
      if (this.lineStart && start < chunk.length) text += stamp
      const nl = chunk.indexOf("\n", start)
      if (nl === -1) {
        text += chunk.slice(start)
        this.lineStart = start >= chunk.length ? this.lineStart : false
        break
      }
      text += chunk.slice(start, nl + 1)
      this.lineStart = true
      start = nl + 1
      if (start >= chunk.length) break
    }
    this.emit(text)
  }

  private emit(text: string): void {
    if (text === "" || this.finished) return
    if (this.bytesLeft !== Infinity) {
      const bytes = Buffer.byteLength(text)
      if (bytes >= this.bytesLeft) {
        this.write(cutBytes(text, this.bytesLeft))
        this.bytesLeft = 0
        this.finish()
        return
      }
      this.bytesLeft -= bytes
    }
    this.write(text)
  }

  private write(text: string): void {
    if (this.out !== undefined) this.out.write(text)
    else this.early!.push(text)
  }

  finish(): void {
    if (this.finished) return
    this.detach()
    if (this.out !== undefined) this.out.end()
    else this.earlyEnd = true
  }

  private detach(): void {
    this.finished = true
    this.log.followers.delete(this)
    this.onClose(this)
  }
}
