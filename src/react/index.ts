/**
 * `@muse-code/sdk/react`: React hooks over an `MspSession` (`@muse-code/sdk/session`). `react`
 * is an optional peer dependency (^18 || ^19); nothing here costs the root entry point. Open the
 * session outside React (or once, at the app's start) and hand it to the hooks: the hooks only
 * read its store, so StrictMode's double effects neither open a second session nor send a second
 * cancel. Any new export added here becomes public API. Use named exports, not wildcards.
 */
export { useSession, useSessionTurn, useSessionConnection } from "./sessionHooks.js";
export type { SessionTurnView } from "./sessionHooks.js";
