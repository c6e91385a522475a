/** The repository root, for tests that spawn processes from it or read files relative to it. */
import { fileURLToPath } from "node:url";

/** The repository root, with a trailing slash (hosts are started from here so `--import tsx` resolves). */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
