/**
 * utf8ByteLength: how many bytes a string takes as UTF-8, counted without encoding it.
 */

/**
 * The UTF-8 length of `text` in bytes (a lone surrogate counts 3, as TextEncoder writes U+FFFD).
 * Past `limit` it stops counting and returns some number over `limit`, so checking a huge
 * string against a bound is cheap.
 */
export function utf8ByteLength(text: string, limit = Infinity): number {
  // Each UTF-16 unit is at least one byte.
  if (text.length > limit) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if ((unit & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
