/**
 * uuidv7: the UUIDv7 strings MSP uses for `commandId` (RFC 9562 §5.7), in a few lines so the
 * browser core does not carry a UUID library. Ids made in the same millisecond still sort in the
 * order they were made: a 12-bit counter in `rand_a` (RFC 9562 §6.2, method 1) counts up from a
 * random start, and borrows the next millisecond when it runs out.
 */

let lastMs = -1;
let counter = 0;

/** A fresh UUIDv7, e.g. `"0198f0aa-1111-7abc-8def-0123456789ab"`; later calls sort after earlier ones. */
export function uuidv7(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = ((bytes[6] as number) << 3) | ((bytes[7] as number) & 7); // 0…2047: room to count up
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  let hex = (lastMs + 2 ** 48).toString(16).slice(1) + (0x7000 | counter).toString(16);
  // Byte 8 carries the variant (0b10xx_xxxx); bytes 8–15 are rand_b.
  for (let i = 8; i < 16; i++) hex += (0x100 + (i === 8 ? ((bytes[i] as number) & 0x3f) | 0x80 : (bytes[i] as number))).toString(16).slice(1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
