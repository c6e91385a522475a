/**
 * uuidv7: the UUIDv7 strings MSP uses for its ids (`commandId`, and the host's `sessionId`, `turnId`, `itemId`) (RFC 9562 §5.7), in a few lines so the
 * browser core does not carry a UUID library. Ids made in the same millisecond still sort in the
 * order they were made: a 12-bit counter in `rand_a` (RFC 9562 §6.2, method 1) counts up from a
 * random start, and borrows the next millisecond when it runs out. The random bits come from
 * `crypto.getRandomValues`, drawn for 256 ids at a time: one call per id cost more than the rest.
 */

let lastMs = -1;
let counter = 0;
/** Random bytes, 10 an id (2 seed the counter, 8 are rand_b); `at` is the next unused one. */
const pool = new Uint8Array(2560);
let at = pool.length;
/** `value` as `digits` lowercase hex digits, zero-padded. */
const hex = (value: number, digits: number) => (value + 16 ** digits).toString(16).slice(1);
const HEX = Array.from({ length: 256 }, (_, byte) => hex(byte, 2));
/** The id's first two groups, for the millisecond `timeMs`: made once a millisecond. */
let timeMs = -1;
let timeHex = "";

/**
 * A fresh UUIDv7 (RFC 9562), e.g. `"0198f0aa-1111-7abc-8def-0123456789ab"`: the form of every MSP
 * id. Later calls sort after earlier ones, within one millisecond too. Make a `commandId` yourself
 * when you may need to send the same command again: the host answers a retry with the same answer.
 *
 * @example
 * ```ts
 * import { uuidv7 } from "@muse-code/sdk";
 *
 * const commandId = uuidv7();
 * const ack = await client.command("turn/start", { sessionId, input, commandId }).catch(() =>
 *   client.command("turn/start", { sessionId, input, commandId }), // a retry: the host de-duplicates it
 * );
 * ```
 */
export function uuidv7(): string {
  if (at === pool.length) {
    globalThis.crypto.getRandomValues(pool);
    at = 0;
  }
  const r = pool;
  const i = at;
  at += 10;
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = ((r[i] as number) << 3) | ((r[i + 1] as number) & 7); // 0…2047: room to count up
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  if (lastMs !== timeMs) {
    timeMs = lastMs;
    const time = hex(lastMs, 12);
    timeHex = `${time.slice(0, 8)}-${time.slice(8)}-`;
  }
  // rand_b's first byte carries the variant (0b10xx_xxxx).
  return `${timeHex}${hex(0x7000 | counter, 4)}-${HEX[((r[i + 2] as number) & 0x3f) | 0x80]}${HEX[r[i + 3] as number]}-${HEX[r[i + 4] as number]}${HEX[r[i + 5] as number]}${HEX[r[i + 6] as number]}${HEX[r[i + 7] as number]}${HEX[r[i + 8] as number]}${HEX[r[i + 9] as number]}`;
}
