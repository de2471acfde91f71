/**
 * The tar format as `kubectl cp` speaks it with a container's tar: POSIX ustar headers,
 * written with a PAX extended header when a name, a link target or a size does not fit,
 * and read in the ustar, PAX (`x`, `g`) and GNU (`L`, `K` long names) forms that GNU tar
 * and BusyBox tar write. Pure: bytes in, entries out; no I/O.
 *
 * @internal
 */

const block = 512
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** @internal */
export type EntryType = "file" | "directory" | "symlink" | "hardlink" | "other"

/** @internal */
export interface Header {
  readonly name: string
  readonly type: EntryType
  readonly size: number
  readonly mode: number
  readonly mtime: number
  readonly linkname: string
}

const typeFlags: Record<string, EntryType> = { "0": "file", "\0": "file", "7": "file", "5": "directory", "2": "symlink", "1": "hardlink" }

const writeString = (buf: Uint8Array, offset: number, length: number, value: string) => {
  buf.set(encoder.encode(value).subarray(0, length), offset)
}

const writeOctal = (buf: Uint8Array, offset: number, length: number, value: number) => {
  // length - 1 digits and a NUL, as GNU tar writes them
  writeString(buf, offset, length, value.toString(8).padStart(length - 1, "0") + "\0")
}

const fitsOctal = (value: number, length: number) => value < 8 ** (length - 1)

/** One PAX record: its length counts itself. */
const paxRecord = (key: string, value: string): string => {
  const body = encoder.encode(` ${key}=${value}\n`).length
  let length = body + String(body).length
  if (String(length).length !== String(body).length) length = body + String(length).length
  return `${length} ${key}=${value}\n`
}

const rawHeader = (name: string, type: string, size: number, mode: number, mtime: number, linkname: string) => {
  const buf = new Uint8Array(block)
  writeString(buf, 0, 100, name)
  writeOctal(buf, 100, 8, mode & 0o7777)
  writeOctal(buf, 108, 8, 0)
  writeOctal(buf, 116, 8, 0)
  writeOctal(buf, 124, 12, fitsOctal(size, 12) ? size : 0)
  writeOctal(buf, 136, 12, Math.max(0, Math.floor(mtime)))
  buf.fill(0x20, 148, 156)
  writeString(buf, 156, 1, type)
  writeString(buf, 157, 100, linkname)
  writeString(buf, 257, 6, "ustar\0")
  writeString(buf, 263, 2, "00")
  let sum = 0
  for (const byte of buf) sum += byte
  writeString(buf, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
  return buf
}

const padding = (size: number): Uint8Array => new Uint8Array((block - (size % block)) % block)

/**
 * The header blocks of one entry (a PAX header first when a field does not fit ustar);
 * its data follows, then `padding(size)`.
 *
 * @internal
 */
export const header = (entry: Header): Uint8Array => {
  const typeFlag = entry.type === "directory" ? "5" : entry.type === "symlink" ? "2" : "0"
  const records: Array<string> = []
  if (encoder.encode(entry.name).length > 100) records.push(paxRecord("path", entry.name))
  if (encoder.encode(entry.linkname).length > 100) records.push(paxRecord("linkpath", entry.linkname))
  if (!fitsOctal(entry.size, 12)) records.push(paxRecord("size", String(entry.size)))
  const main = rawHeader(entry.name, typeFlag, entry.size, entry.mode, entry.mtime, entry.linkname)
  if (records.length === 0) return main
  const pax = encoder.encode(records.join(""))
  const paxHeader = rawHeader("PaxHeader", "x", pax.length, 0o644, entry.mtime, "")
  return concat([paxHeader, pax, padding(pax.length), main])
}

/** @internal */
export { padding }

/** The two zero blocks that end an archive. @internal */
export const end = (): Uint8Array => new Uint8Array(block * 2)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const readString = (buf: Uint8Array, offset: number, length: number): string => {
  const field = buf.subarray(offset, offset + length)
  const nul = field.indexOf(0)
  return decoder.decode(nul === -1 ? field : field.subarray(0, nul))
}

const readNumber = (buf: Uint8Array, offset: number, length: number): number => {
  // GNU's base-256 form for large values: the high bit of the first byte set
  if ((buf[offset]! & 0x80) !== 0) {
    let value = buf[offset]! & 0x7f
    for (let i = 1; i < length; i++) value = value * 256 + buf[offset + i]!
    return value
  }
  const text = readString(buf, offset, length).trim()
  return text === "" ? 0 : parseInt(text, 8)
}

/** What the reader found wrong with an archive. @internal */
export class TarFormatError extends Error {}

const parsePax = (data: Uint8Array): Record<string, string> => {
  const text = decoder.decode(data)
  const fields: Record<string, string> = {}
  let at = 0
  while (at < text.length) {
    const space = text.indexOf(" ", at)
    if (space === -1) break
    const length = Number(text.slice(at, space))
    if (!Number.isSafeInteger(length) || length <= 0) throw new TarFormatError("a PAX record with a bad length")
    const record = text.slice(space + 1, at + length - 1)
    const eq = record.indexOf("=")
    if (eq !== -1) fields[record.slice(0, eq)] = record.slice(eq + 1)
    at += length
  }
  return fields
}

/** @internal */
export type Event =
  | { readonly _tag: "Entry"; readonly header: Header }
  | { readonly _tag: "Data"; readonly bytes: Uint8Array }
  | { readonly _tag: "EntryEnd" }

/**
 * An incremental reader: `push` each chunk as it arrives and act on the events it
 * answers, in order; `finish` once the input has ended.
 *
 * @internal
 */
export const reader = () => {
  let pending = new Uint8Array(0)
  // what is being read: a header, an entry's data (how much is left, then its padding), or a meta entry's data
  let state: "header" | "data" | "meta" | "done" = "header"
  let remaining = 0
  let pad = 0
  let meta: { readonly kind: string; readonly parts: Array<Uint8Array> } | undefined
  let longName: string | undefined
  let longLink: string | undefined
  let pax: Record<string, string> = {}
  let global: Record<string, string> = {}
  let zeroBlocks = 0

  const onHeader = (buf: Uint8Array, events: Array<Event>) => {
    if (buf.every((b) => b === 0)) {
      zeroBlocks++
      if (zeroBlocks === 2) state = "done"
      return
    }
    zeroBlocks = 0
    let sum = 0
    for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 0x20 : buf[i]!
    if (sum !== readNumber(buf, 148, 8)) throw new TarFormatError("a header with a bad checksum")
    const flag = String.fromCharCode(buf[156]!)
    const size = readNumber(buf, 124, 12)
    if (flag === "x" || flag === "g" || flag === "L" || flag === "K") {
      meta = { kind: flag, parts: [] }
      remaining = size
      pad = (block - (size % block)) % block
      state = "meta"
      if (size === 0) finishMeta()
      return
    }
    const ustarPrefix = readString(buf, 257, 6) === "ustar" ? readString(buf, 345, 155) : ""
    const fields = { ...global, ...pax }
    const name = fields.path ?? longName ?? (ustarPrefix !== "" ? `${ustarPrefix}/` : "") + readString(buf, 0, 100)
    const linkname = fields.linkpath ?? longLink ?? readString(buf, 157, 100)
    const realSize = fields.size !== undefined ? Number(fields.size) : size
    const type = typeFlags[flag] ?? "other"
    pax = {}
    longName = undefined
    longLink = undefined
    const dataSize = type === "file" || type === "other" ? realSize : 0
    events.push({
      _tag: "Entry",
      header: { name, type, size: dataSize, mode: readNumber(buf, 100, 8), mtime: readNumber(buf, 136, 12), linkname }
    })
    remaining = dataSize
    pad = (block - (dataSize % block)) % block
    if (dataSize === 0) {
      events.push({ _tag: "EntryEnd" })
      state = "header"
    } else state = "data"
  }

  const finishMeta = () => {
    const data = concat(meta!.parts)
    const text = () => readString(data, 0, data.length)
    if (meta!.kind === "x") pax = parsePax(data)
    else if (meta!.kind === "g") global = { ...global, ...parsePax(data) }
    else if (meta!.kind === "L") longName = text()
    else longLink = text()
    meta = undefined
    state = remaining === 0 && pad === 0 ? "header" : state
  }

  const push = (chunk: Uint8Array): ReadonlyArray<Event> => {
    const events: Array<Event> = []
    let buf = pending.length === 0 ? chunk : concat([pending, chunk])
    let at = 0
    while (at < buf.length && state !== "done") {
      if (state === "header") {
        if (buf.length - at < block) break
        onHeader(buf.subarray(at, at + block), events)
        at += block
      } else if (remaining > 0) {
        const take = Math.min(remaining, buf.length - at)
        const bytes = buf.subarray(at, at + take)
        if (state === "data") events.push({ _tag: "Data", bytes: bytes.slice() })
        else meta!.parts.push(bytes.slice())
        remaining -= take
        at += take
        if (remaining === 0 && state === "meta") {
          finishMeta()
        }
        if (remaining === 0 && state === "data" && pad === 0) {
          events.push({ _tag: "EntryEnd" })
          state = "header"
        }
      } else {
        const take = Math.min(pad, buf.length - at)
        pad -= take
        at += take
        if (pad === 0) {
          if (state === "data") events.push({ _tag: "EntryEnd" })
          state = "header"
        }
      }
    }
    buf = buf.subarray(at)
    pending = state === "done" ? new Uint8Array(0) : buf.slice()
    return events
  }

  const finish = (): void => {
    // GNU tar always ends with zero blocks; an archive cut inside an entry did not arrive whole
    if (state === "data" || state === "meta" || pending.length > 0) throw new TarFormatError("the archive ended inside an entry")
  }

  return { push, finish }
}
