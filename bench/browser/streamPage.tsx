// The browser bench's page (bench/browserStream.ts): one session over WebSocket to the reference host, one turn
// started as soon as the session is open, rendered with useSessionTurn into React 19 (production build). Long text
// (the message, the tool's output) is rendered in fixed segments: a finished segment is sliced once, never
// re-renders, and is skipped by layout and paint while off screen, so a delta costs the DOM the last segment only.
import { memo, useRef } from "react";
import { createRoot } from "react-dom/client";
import type { Item } from "@muse-code/sdk";
import { useSessionTurn } from "@muse-code/sdk/react";
import { openSession } from "@muse-code/sdk/session";
import { connectWebSocket, keptToken } from "@muse-code/sdk/websocket";

/** What the bench reads back: deltas seen, the last one's time, and whether the turn ended. */
interface BenchState {
  deltas: number;
  firstDeltaAt: number;
  lastDeltaAt: number;
  endedAt: number;
  textLength: number;
  outputLength: number;
  terminal: string | undefined;
  syncAt: number;
}
const bench: BenchState = { deltas: 0, firstDeltaAt: 0, lastDeltaAt: 0, endedAt: 0, textLength: 0, outputLength: 0, terminal: undefined, syncAt: 0 };
(window as unknown as { bench: BenchState }).bench = bench;

const token = keptToken({ storage: sessionStorage });
const session = await openSession({
  connect: async () => {
    const client = await connectWebSocket(`ws://${location.host}/msp`, { token });
    client.events.on("item/delta", () => {
      const now = performance.now();
      if (bench.deltas++ === 0) bench.firstDeltaAt = now;
      bench.lastDeltaAt = now;
    });
    return client;
  },
  storage: sessionStorage,
});
// The trace's clock and the page's: one mark at a known performance.now().
bench.syncAt = performance.mark("bench-sync").startTime;
const { turnId } = session.startTurn("stream the long answer");

const SEGMENT = 8_192;

/** One finished segment of an append-only text: the same string every render, so it never re-renders. */
const Segment = memo(function Segment({ text }: { text: string }) {
  return <div className="segment">{text}</div>;
});

/** An append-only text in segments: each finished one is sliced once and kept; a render slices only the tail. */
function Segmented({ text, className }: { text: string; className: string }) {
  const finished = useRef<string[]>([]).current;
  const count = Math.floor(text.length / SEGMENT);
  for (let i = finished.length; i < count; i++) finished.push(text.slice(i * SEGMENT, (i + 1) * SEGMENT));
  return (
    <div className={className}>
      {finished.map((segment, i) => (
        <Segment key={i} text={segment} />
      ))}
      <div className="segment">{text.slice(count * SEGMENT)}</div>
    </div>
  );
}

const ItemView = memo(function ItemView({ item }: { item: Item }) {
  if (item.kind === "message") return <Segmented className="message" text={item.text} />;
  if (item.kind === "toolCall") return <Segmented className="tool" text={item.visibleOutput} />;
  return null;
});

function Turn() {
  const { turn } = useSessionTurn(session, turnId);
  if (turn === undefined) return null;
  if (turn.phase === "ended" && bench.endedAt === 0) {
    bench.endedAt = performance.now();
    bench.terminal = turn.terminal?.terminal;
    for (const item of turn.items) {
      if (item.kind === "message") bench.textLength += item.text.length;
      if (item.kind === "toolCall") bench.outputLength += item.visibleOutput.length;
    }
  }
  return (
    <section data-phase={turn.phase}>
      {turn.items.map((item) => (
        <ItemView key={item.itemId} item={item} />
      ))}
    </section>
  );
}

createRoot(document.getElementById("root") as HTMLElement).render(<Turn />);
