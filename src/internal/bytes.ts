/**
 * Byte chunks put together.
 *
 * @internal
 */

/** The chunks as one array (the chunk itself when there is one). @internal */
export const concatBytes = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  let size = 0
  for (const chunk of chunks) size += chunk.length
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}
