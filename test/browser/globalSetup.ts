/**
 * Vitest global setup for the browser project: provisions Chromium once per run, in the main
 * process before any worker starts (so no two workers inflate or install it at once), and hands
 * the result to the tests through `provide`/`inject("chromium")`. A failure is handed over too, so
 * the browser tests fail with its one line while the rest of the run still reports.
 */
import type { TestProject } from "vitest/node";
import { provisionChromium, type ChromiumProblem, type ProvisionedChromium } from "./provisionChromium.js";

declare module "vitest" {
  export interface ProvidedContext {
    chromium: ProvisionedChromium | ChromiumProblem;
  }
}

export async function setup(project: TestProject): Promise<void> {
  try {
    project.provide("chromium", await provisionChromium());
  } catch (error) {
    project.provide("chromium", { problem: error instanceof Error ? error.message : String(error) });
  }
}
