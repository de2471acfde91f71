/**
 * SPDY/3 header blocks: a count, then length-prefixed names and values (a value may hold
 * several, NUL-separated), compressed with zlib over the whole session with the SPDY/3
 * dictionary, each block ending in a sync flush.
 *
 * Reading: a sync flush ends every block on a byte boundary with no deflate block open,
 * so each block is inflated on its own, its window primed with the last 32 KiB the
 * session's stream produced (the dictionary to begin with). That is synchronous and
 * costs one block's work, not the session's.
 *
 * Writing: the fake answers with stored (uncompressed) deflate blocks, a valid
 * continuation of a zlib stream that any SPDY peer inflates, each followed by the empty
 * stored block a sync flush writes (Go's inflater hands over a block's bytes only once it
 * reads the next block's header); its replies carry no headers.
 *
 * @internal
 */
import * as Zlib from "node:zlib"

/** The words of the SPDY/3 header dictionary, each stored after its 32-bit length. */
const dictionaryWords = [
  "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
  "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
  "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
  "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
  "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
  "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
  "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
  "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie",
  "keep-alive", "origin"
]

/** The text that closes the SPDY/3 dictionary: status codes and phrases, dates, common values. */
const dictionaryTail = "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505" +
  "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized" +
  "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable" +
  "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT" +
  "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain," +
  "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."

/** The SPDY/3 zlib dictionary (1423 bytes, Adler-32 0xe3c6a7c2). @internal */
export const dictionary: Buffer = Buffer.concat([
  ...dictionaryWords.flatMap((word) => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(word.length)
    return [length, Buffer.from(word, "latin1")]
  }),
  Buffer.from(dictionaryTail, "latin1")
])

/** The dictionary's Adler-32, as a zlib header names it. */
const dictionaryId = (() => {
  let a = 1
  let b = 0
  for (const byte of dictionary) {
    a = (a + byte) % 65521
    b = (b + a) % 65521
  }
  return ((b << 16) | a) >>> 0
})()

const window = 32 * 1024

/** Header names (lower-case) to their values. @internal */
export type Headers = ReadonlyMap<string, ReadonlyArray<string>>

/** Why a header block cannot be read; the session ends with a protocol error. @internal */
export class HeaderError extends Error {}

/** Reads one side's header blocks, in the order they came. @internal */
export class HeaderReader {
  private history: Buffer = dictionary
  private started = false

  read(block: Uint8Array): Headers {
    let data = Buffer.from(block.buffer, block.byteOffset, block.byteLength)
    if (!this.started) {
      // the zlib header: deflate, and (as SPDY peers send it) the dictionary's id
      if (data.length < 2 || (data[0]! & 0x0f) !== 8 || ((data[0]! << 8) | data[1]!) % 31 !== 0) {
        throw new HeaderError("the header block is not a zlib stream")
      }
      let skip = 2
      if ((data[1]! & 0x20) !== 0) {
        if (data.length < 6 || data.readUInt32BE(2) !== dictionaryId) {
          throw new HeaderError("the header block names another dictionary")
        }
        skip = 6
      }
      data = data.subarray(skip)
      this.started = true
    }
    let out: Buffer
    try {
      out = Zlib.inflateRawSync(data, { dictionary: this.history, finishFlush: Zlib.constants.Z_SYNC_FLUSH })
    } catch (e) {
      throw new HeaderError(`cannot inflate a header block: ${(e as Error).message}`)
    }
    const joined = Buffer.concat([this.history, out])
    this.history = joined.length > window ? joined.subarray(joined.length - window) : joined
    return parseBlock(out)
  }
}

const parseBlock = (block: Buffer): Headers => {
  const headers = new Map<string, Array<string>>()
  let offset = 0
  const take = (): string => {
    if (offset + 4 > block.length) throw new HeaderError("a header block ends early")
    const length = block.readUInt32BE(offset)
    offset += 4
    if (offset + length > block.length) throw new HeaderError("a header block ends early")
    const text = block.toString("utf8", offset, offset + length)
    offset += length
    return text
  }
  if (block.length < 4) throw new HeaderError("a header block ends early")
  const count = block.readUInt32BE(0)
  offset = 4
  for (let i = 0; i < count; i++) {
    const name = take().toLowerCase()
    const values = take().split("\u0000")
    headers.set(name, [...(headers.get(name) ?? []), ...values])
  }
  return headers
}

/** Writes one side's header blocks as stored deflate blocks of a zlib stream. @internal */
export class HeaderWriter {
  private started = false

  write(headers: ReadonlyArray<readonly [string, string]>): Buffer {
    const parts: Array<Buffer> = [u32(headers.length)]
    for (const [name, value] of headers) {
      const n = Buffer.from(name.toLowerCase(), "utf8")
      const v = Buffer.from(value, "utf8")
      parts.push(u32(n.length), n, u32(v.length), v)
    }
    const block = Buffer.concat(parts)
    if (block.length > 0xffff) throw new HeaderError("a header block the fake writes is at most 64 KiB")
    // a stored block (BFINAL 0, BTYPE 00, aligned), its length and its complement, then the bytes
    const stored = Buffer.alloc(5)
    stored.writeUInt16LE(block.length, 1)
    stored.writeUInt16LE(~block.length & 0xffff, 3)
    const head = this.started ? [] : [Buffer.from([0x78, 0x20]), u32(dictionaryId)]
    this.started = true
    return Buffer.concat([...head, stored, block, syncFlush])
  }
}

/** The empty stored block that ends a sync flush. */
const syncFlush = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}
