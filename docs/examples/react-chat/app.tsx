// A chat UI that survives reloads and drops, on @muse-code/sdk/react: stream a turn, Stop until
// the turn's own terminal, survive a reload and a dropped socket, answer the host's approvals.
// Served by the host itself: `npx muse-host serve --ws 8080 --ui-dir dist/chat --token-file .muse-token`,
// opened at the URL it prints (http://127.0.0.1:8080/#token=…).
import { StrictMode, useState, type FormEvent } from "react";
import { createRoot } from "react-dom/client";
import type { Item } from "@muse-code/sdk";
import { useSession, useSessionTurn } from "@muse-code/sdk/react";
import { openSession, type MspSession, type SessionTurn } from "@muse-code/sdk/session";
import { describeTerminal } from "@muse-code/sdk/ui";
import { connectWebSocket } from "@muse-code/sdk/websocket";

// The token comes in the address's fragment once; keep it for reloads, and take it out of the address bar.
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? sessionStorage.getItem("chat:token") ?? "";
sessionStorage.setItem("chat:token", token);
history.replaceState(null, "", location.pathname);

// One session for the page, opened outside React: StrictMode's double effects cannot open a second one.
const session = await openSession({
  connect: () => connectWebSocket(`ws://${location.host}/`, { token }),
  storage: sessionStorage, // the session, its cursor, its turns and pending Stops survive a reload
});

function App({ session }: { session: MspSession }) {
  const { connection, turns } = useSession(session);
  const [prompt, setPrompt] = useState("");
  const send = (event: FormEvent) => {
    event.preventDefault();
    if (prompt.trim() === "") return;
    session.startTurn(prompt);
    setPrompt("");
  };
  return (
    <main>
      <p role="status" data-state={connection.state}>
        {connection.state}
        {connection.reason === undefined || connection.state === "open" ? "" : ` (${connection.reason.message})`}
        {connection.state !== "open" && <button onClick={() => void session.retryNow()}>Retry now</button>}
      </p>
      <ol>
        {turns.map((turn) => (
          <Turn key={turn.turnId} session={session} turnId={turn.turnId} />
        ))}
      </ol>
      <form onSubmit={send}>
        <textarea aria-label="Prompt" value={prompt} onChange={(event) => setPrompt(event.target.value)} />
        <button type="submit">Send</button>
      </form>
    </main>
  );
}

function Turn({ session, turnId }: { session: MspSession; turnId: string }) {
  const { turn, stop, answer } = useSessionTurn(session, turnId);
  if (turn === undefined) return null;
  const busy = turn.phase !== "ended" && turn.phase !== "unknown";
  return (
    <li data-turn={turnId} data-phase={turn.phase}>
      <p className="prompt">{turn.input?.map((part) => part.text).join("")}</p>
      {turn.items.map((item) => (
        <ItemView key={item.itemId} item={item} />
      ))}
      {turn.approvals.map((question) => (
        <div role="dialog" key={question.itemId}>
          Run {question.tool} {question.args}? <button onClick={() => answer(question.itemId, "approve")}>Approve</button>
          <button onClick={() => answer(question.itemId, "deny", "the user said no")}>Deny</button>
        </div>
      ))}
      {busy && (
        <button className="stop" onClick={stop} disabled={turn.stopRequested} aria-busy={turn.stopRequested}>
          {turn.stopRequested ? "Stopping…" : "Stop"}
        </button>
      )}
      <p className="phase">{describe(turn)}</p>
    </li>
  );
}

function ItemView({ item }: { item: Item }) {
  if (item.kind === "toolCall") return <pre className="tool">{`$ ${item.tool}\n${item.visibleOutput}`}</pre>;
  return <p className={item.kind}>{item.text}</p>;
}

/** What the turn's line says: only the host's own terminal is an ending ("you stopped it", "stopped by policy: …"). */
function describe(turn: SessionTurn): string {
  if (turn.phase === "ended" && turn.terminal !== undefined) return describeTerminal(turn.terminal);
  if (turn.phase === "unknown") return `unknown: ${turn.unknownReason ?? ""}`;
  if (turn.phase === "reconnecting") return "reconnecting: the turn may still be running";
  return turn.phase;
}

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App session={session} />
  </StrictMode>,
);
