/** Test helper for the muse CLI: what a screen shows, in order. */
import { expect } from "vitest";

/** Expect every one of `parts` in `text`, each (its first occurrence) after the one before it; `text` is the failure's message. */
export function expectInOrder(text: string, parts: readonly string[]): void {
  const at = parts.map((s) => text.indexOf(s));
  expect(
    at.every((i) => i >= 0),
    text,
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
}
