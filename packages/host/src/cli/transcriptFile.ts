/** transcriptFile: `--record FILE`, the wire written line by line as a transcript while it crosses. */
import { closeSync, openSync, writeSync } from "node:fs";
import { formatTranscriptEntry, type TranscriptEntry } from "@muse-code/sdk/testing";

/**
 * An open transcript file. Each entry is written synchronously as it crosses the wire, so the file
 * holds everything up to the moment `muse` stops, however it stops.
 */
export interface TranscriptFile {
  write(entry: TranscriptEntry): void;
  close(): void;
}

/**
 * Create (or truncate) `path` for a transcript. Throws an `Error` with a one-line message (its `cause` the
 * `fs` error) when it cannot be created.
 */
export function openTranscriptFile(path: string): TranscriptFile {
  let fd: number | undefined;
  try {
    fd = openSync(path, "w");
  } catch (error) {
    throw new Error(`cannot create --record ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  return {
    write(entry) {
      if (fd !== undefined) writeSync(fd, `${formatTranscriptEntry(entry)}\n`);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
