/**
 * Feed chunks straight into a framed reader and collect what it delivers, reports and whether
 * it closed: the framing tests' one harness.
 */
import type { Message } from "vscode-jsonrpc";
import type { ByteChannel, FramedMessageReader, FramingProblem } from "../../src/framing/index.js";

export interface ReadResult {
  messages: Message[];
  problems: FramingProblem[];
  closed: boolean;
}

export function readChunks(makeReader: (channel: ByteChannel) => FramedMessageReader, chunks: Uint8Array[]): ReadResult {
  const data = new Set<(c: Uint8Array) => void>();
  const channel: ByteChannel = {
    onData: (l) => (data.add(l), () => data.delete(l)),
    onEnd: () => () => {},
    onError: () => () => {},
    write: () => {},
    end: () => {},
  };
  const reader = makeReader(channel);
  const result: ReadResult = { messages: [], problems: [], closed: false };
  reader.onProblem((p) => result.problems.push(p));
  reader.onClose(() => (result.closed = true));
  reader.listen((m) => result.messages.push(m));
  for (const c of chunks) for (const l of [...data]) l(c);
  return result;
}
