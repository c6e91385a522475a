/** The `recordedAt` stamp of the host's items: the ISO time, formatted once a millisecond. */
let isoMs = Number.NaN;
let isoText = "";

/**
 * `new Date().toISOString()`, made once a millisecond: a streaming turn stamps every update's
 * `recordedAt`, many of them in the same millisecond, and formatting costs more than the rest of
 * the update's bookkeeping.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
