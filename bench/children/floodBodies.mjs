/**
 * The flood children's messages: N ~800-byte MSP notification bodies (9 item/updated then
 * 1 turn/completed per turn, strictly increasing viewCursor), shared by flood.mjs (stdio) and
 * webSocketFlood.mjs (WebSocket) so both rows measure the same bytes.
 */
export const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const pad = "lorem ipsum dolor sit amet, ".repeat(20).slice(0, 520);

/** The JSON text of notification `i` (0-based) of a flood. */
export function floodBody(i) {
  const turnId = `0198f0aa-2222-7000-8000-${String(Math.floor(i / 10)).padStart(12, "0")}`;
  const cursor = `v:${SESSION}:${i + 1}`;
  return i % 10 === 9
    ? `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"${SESSION}","viewCursor":"${cursor}","emittedAtMs":${i},"turnId":"${turnId}","terminal":"completed","reason":"completed","durationMs":12,"note":"${pad}"}}`
    : `{"jsonrpc":"2.0","method":"item/updated","params":{"sessionId":"${SESSION}","viewCursor":"${cursor}","emittedAtMs":${i},"item":{"itemId":"${turnId}-m","kind":"message","turnId":"${turnId}","revision":${i % 10},"status":"inProgress","recordedAt":"2025-01-01T00:00:00.000Z","text":"${pad}"}}}`;
}

/** Notifications of one turn of the delta flood: turn/started, item/started, the deltas, item/completed, turn/completed. */
export const DELTA_TURN = 100;
const DELTAS_PER_TURN = DELTA_TURN - 4;
/** One delta's text: ~420 characters of prose with a line break, so each `item/delta` is ~770 bytes as a host sends it. */
const appendOf = (k) =>
  `${k % 7 === 0 ? "\\n\\n" : ""}${"The fold appends this chunk of an answer to the message, token by token. ".repeat(6).slice(0, 420)} ${k}`;

/**
 * The JSON text of notification `i` (0-based) of the delta flood, as the reference host writes
 * it (its envelope's `emittedAtMs` is the index): each turn of {@link DELTA_TURN} is
 * `turn/started`, a message's `item/started` (revision 1, empty text), 96 `item/delta` appends of
 * ~420 characters (~770 bytes each), the whole message in `item/completed` (~40 KB) and
 * `turn/completed`; viewCursor strictly increasing. `sessionId` is the session every one names.
 */
export function deltaBody(i, sessionId = SESSION) {
  const t = Math.floor(i / DELTA_TURN);
  const k = i % DELTA_TURN;
  const turnId = `0198f0aa-2222-7000-8000-${String(t).padStart(12, "0")}`;
  const itemId = `0198f0aa-3333-7000-8000-${String(t).padStart(12, "0")}`;
  const base = `"sessionId":"${sessionId}","viewCursor":"v:${sessionId}:${i + 1}"`;
  const at = `"recordedAt":"2026-12-01T17:55:15.${String(k).padStart(3, "0")}Z"`;
  const tail = `,"emittedAtMs":${i}}`;
  if (k === 0) return `{"jsonrpc":"2.0","method":"turn/started","params":{${base},"turnId":"${turnId}","model":"default"}${tail}`;
  if (k === 1)
    return `{"jsonrpc":"2.0","method":"item/started","params":{${base},"item":{"itemId":"${itemId}","turnId":"${turnId}","revision":1,"status":"inProgress",${at},"text":"","kind":"message"}}${tail}`;
  if (k < DELTA_TURN - 2)
    return `{"jsonrpc":"2.0","method":"item/delta","params":{${base},"turnId":"${turnId}","itemId":"${itemId}","revision":${k},"field":"text","append":"${appendOf(k)}",${at}}${tail}`;
  if (k === DELTA_TURN - 2) {
    let text = "";
    for (let d = 2; d < DELTA_TURN - 2; d++) text += appendOf(d);
    return `{"jsonrpc":"2.0","method":"item/completed","params":{${base},"item":{"itemId":"${itemId}","turnId":"${turnId}","revision":${DELTAS_PER_TURN + 2},"status":"completed",${at},"text":"${text}","kind":"message"}}${tail}`;
  }
  return `{"jsonrpc":"2.0","method":"turn/completed","params":{${base},"turnId":"${turnId}","terminal":"completed","reason":"completed","durationMs":12}${tail}`;
}
