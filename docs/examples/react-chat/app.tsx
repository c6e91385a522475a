// A chat UI on @muse-code/sdk/react: stream a turn with its live tool output, Stop until the turn's
// own terminal, survive a reload, a dropped socket and a host restart, answer the host's approvals
// (a Stop while asking withdraws the question, online or not), and choose the model.
// Served by the host itself, with the models to choose from (docs/sessions-that-survive.md has the commands):
// `npx muse serve --ws 8080 --ui-dir dist/chat --model demo=node_modules/@muse-code/host/models/demo.json
// --model hello=node_modules/@muse-code/host/models/hello.json --token-file .muse-token --data .muse-data`,
// opened at the URL it prints (http://127.0.0.1:8080/#token=…).
import { StrictMode, useState, type FormEvent } from "react";
import { createRoot } from "react-dom/client";
import type { Item, ModelInfo } from "@muse-code/sdk";
import { useSession, useSessionTurn } from "@muse-code/sdk/react";
import { openSession, type SessionApproval } from "@muse-code/sdk/session";
import { canStop, describePhase } from "@muse-code/sdk/ui";
import { connectWebSocket, keptToken } from "@muse-code/sdk/websocket";

// The address carries the token in its fragment once (#token=…): kept for reloads, gone from the address bar.
const token = keptToken({ storage: sessionStorage });
// The models the host offers: each connection asks first, so they are here when the page shows it open.
let models: readonly ModelInfo[] = [];
// `?model=NAME` picks the model a new session starts with; the <select> switches it from the next turn.
const firstModel = new URLSearchParams(location.search).get("model");

// One session for the page, opened outside React: StrictMode's double effects cannot open a second one.
const session = await openSession({
  connect: async () => {
    const client = await connectWebSocket(`ws://${location.host}/msp`, { token });
    ({ models } = await client.command("host/info", {}));
    return client;
  },
  storage: sessionStorage, // the session, its cursor, its turns, its questions and pending Stops survive a reload
  ...(firstModel === null ? {} : { model: firstModel }),
});

function App() {
  const { connection, turns, model } = useSession(session);
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
      <label>
        Model{" "}
        <select value={model.requested ?? model.current ?? ""} onChange={(event) => session.setModel(event.target.value)}>
          {models.map(({ id }) => (
            <option key={id}>{id}</option>
          ))}
        </select>
        {model.refused !== undefined && <span role="alert">{` ${model.refused.model}: ${model.refused.message}`}</span>}
      </label>
      <ol>
        {turns.map((turn) => (
          <Turn key={turn.turnId} turnId={turn.turnId} />
        ))}
      </ol>
      <form onSubmit={send}>
        <textarea aria-label="Prompt" value={prompt} onChange={(event) => setPrompt(event.target.value)} />
        <button type="submit">Send</button>
      </form>
    </main>
  );
}

function Turn({ turnId }: { turnId: string }) {
  const { turn, stop, answer } = useSessionTurn(session, turnId);
  if (turn === undefined) return null;
  return (
    <li data-turn={turnId} data-phase={turn.phase}>
      <p className="prompt">{turn.input?.map((part) => part.text).join("")}</p>
      {turn.items.map((item) => (
        <ItemView key={item.itemId} item={item} />
      ))}
      {turn.approvals.map((question) => (
        <div role="dialog" key={question.itemId}>
          Run {question.tool} {question.args}? <Answer question={question} answer={answer} />
        </div>
      ))}
      {canStop(turn) && (
        <button className="stop" onClick={stop}>
          Stop
        </button>
      )}
      <p className="phase">{describePhase(turn)}</p>
    </li>
  );
}

/** The buttons while the question is for the user; once Stop withdrew it, or it was answered offline, the words instead. */
function Answer({ question, answer }: { question: SessionApproval; answer: (itemId: string, decision: "approve" | "deny", reason?: string) => void }) {
  if (question.withdrawing === true) return <em>withdrawn: you stopped the turn</em>;
  if (question.answered !== undefined) return <em>{question.answered}: sent when the host asks again</em>;
  return (
    <>
      <button onClick={() => answer(question.itemId, "approve")}>Approve</button>
      <button onClick={() => answer(question.itemId, "deny", "the user said no")}>Deny</button>
    </>
  );
}

function ItemView({ item }: { item: Item }) {
  if (item.kind === "toolCall") return <pre className="tool" data-status={item.status}>{`$ ${item.tool}\n${item.visibleOutput}`}</pre>;
  return <p className={item.kind}>{item.text}</p>;
}

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
