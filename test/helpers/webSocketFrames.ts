/**
 * A tap on one direction of a TCP connection that carries a WebSocket: it skips the HTTP opening
 * head and hands on each text message, unmasked (a browser masks what it sends) and joined from
 * its fragments. A connection whose head is not a WebSocket upgrade (a page request) is ignored.
 * Uncompressed frames only: the reference host turns permessage-deflate off.
 */

/** Feeds the bytes of one direction, in order; `onText` hears each text message whole. */
export function webSocketTextTap(onText: (text: string) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let mode: "head" | "frames" | "off" = "head";
  let message: Buffer[] = [];
  let messageIsText = false;
  return (chunk) => {
    if (mode === "off") return;
    buffered = Buffer.concat([buffered, chunk]);
    if (mode === "head") {
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const upgrade = /^HTTP\/1\.1 101 /.test(head) || (/^GET /.test(head) && /\r\nupgrade: websocket/i.test(head));
      if (!upgrade) {
        mode = "off";
        buffered = Buffer.alloc(0);
        return;
      }
      mode = "frames";
      buffered = buffered.subarray(end + 4);
    }
    for (;;) {
      if (buffered.length < 2) return;
      const first = buffered[0] as number;
      const second = buffered[1] as number;
      let length = second & 0x7f;
      let at = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        at = 10;
      }
      const masked = (second & 0x80) !== 0;
      const payloadAt = at + (masked ? 4 : 0);
      if (buffered.length < payloadAt + length) return;
      const payload = Buffer.from(buffered.subarray(payloadAt, payloadAt + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (buffered[at + (i % 4)] as number);
      buffered = buffered.subarray(payloadAt + length);
      const opcode = first & 0x0f;
      const fin = (first & 0x80) !== 0;
      if (opcode === 0x1 || opcode === 0x2) {
        message = [payload];
        messageIsText = opcode === 0x1;
      } else if (opcode === 0x0) message.push(payload);
      else continue; // close, ping, pong
      if (fin) {
        if (messageIsText) onText(Buffer.concat(message).toString("utf8"));
        message = [];
      }
    }
  };
}
