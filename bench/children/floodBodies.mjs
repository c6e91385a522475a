/**
 * The flood children's messages: N ~800-byte MSP notification bodies (9 item/updated then
 * 1 turn/completed per turn, strictly increasing viewCursor), shared by flood.mjs (stdio) and
 * webSocketFlood.mjs (WebSocket) so both rows measure the same bytes.
 */
const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const pad = "lorem ipsum dolor sit amet, ".repeat(20).slice(0, 520);

/** The JSON text of notification `i` (0-based) of a flood. */
export function floodBody(i) {
  const turnId = `0198f0aa-2222-7000-8000-${String(Math.floor(i / 10)).padStart(12, "0")}`;
  const cursor = `v:${SESSION}:${i + 1}`;
  return i % 10 === 9
    ? `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"${SESSION}","viewCursor":"${cursor}","emittedAtMs":${i},"turnId":"${turnId}","terminal":"completed","reason":"completed","durationMs":12,"note":"${pad}"}}`
    : `{"jsonrpc":"2.0","method":"item/updated","params":{"sessionId":"${SESSION}","viewCursor":"${cursor}","emittedAtMs":${i},"item":{"itemId":"${turnId}-m","kind":"message","turnId":"${turnId}","revision":${i % 10},"status":"inProgress","recordedAt":"2025-01-01T00:00:00.000Z","text":"${pad}"}}}`;
}
