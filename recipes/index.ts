/**
 * The cookbook: every recipe, in the order the runner lists them.
 */
import { recipe as cancelMidTurn } from "./cancel-mid-turn.js";
import { recipe as cancelRace } from "./cancel-race.js";
import type { Recipe } from "./recipe.js";

export const recipes: readonly Recipe[] = [cancelMidTurn, cancelRace];
