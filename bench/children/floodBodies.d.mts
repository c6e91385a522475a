/** Types of floodBodies.mjs, for the bench's TypeScript. */
export declare const SESSION: string;
export declare const DELTA_TURN: number;
export declare function floodBody(i: number): string;
export declare function deltaBody(i: number, sessionId?: string): string;
