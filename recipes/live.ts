/**
 * The live arm of the recipe runner: runs a recipe against the reference host
 * (`muse-host serve --stdio`) spawned as a real child process.
 */
import type { Recipe, RecipeArm } from "./recipe.js";

/** Whether this checkout has the reference host to run live arms against. */
export function liveAvailable(): boolean {
  return false;
}

/** Build the live environment for one recipe. */
export async function liveArm(recipe: Recipe, _log: (line: string) => void, _root: string): Promise<RecipeArm> {
  throw new Error(`${recipe.name}: the live arm needs the reference host`);
}
