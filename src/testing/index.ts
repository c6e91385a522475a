/**
 * @muse-code/sdk/testing: fixtures for testing apps and hosts (Node).
 *
 * Any new export added here becomes public API. Use named exports, not wildcards.
 *
 * @packageDocumentation
 */
export { CannedHost, TRANSCRIPT_MISMATCH_CODE } from "./cannedHost.js";
export type { CannedHostOptions, DoneOptions } from "./cannedHost.js";
export { createLinkedPair } from "./linkedPair.js";
export type { LinkedChannel } from "./linkedPair.js";
export { parseTranscript, formatTranscriptEntry, readTranscript } from "./transcript.js";
export type { TranscriptEntry, TranscriptLine } from "./transcript.js";
export { checkTranscript, checkTranscriptParts } from "./checkTranscript.js";
export type { CheckTranscriptOptions, TranscriptCheck, TranscriptInput } from "./checkTranscript.js";
export { recordingChannel } from "./recordingChannel.js";
export type { RecordingChannelOptions } from "./recordingChannel.js";
export { recordingWebSocket } from "./recordingWebSocket.js";
