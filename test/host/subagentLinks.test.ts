/**
 * Issue 23: the host's parent→child session links are bounded. Past the bound the oldest link is
 * forgotten first, and with it the child's place in its parent's tree; the default is documented.
 */
import { describe, expect, it } from "vitest";
import { Delivery, type DeliverySource } from "../../packages/host/src/server/delivery.js";
import { DEFAULT_MAX_SUBAGENT_LINKS } from "../../packages/host/src/server/sessionRoutes.js";

const source: DeliverySource = { read: () => [], lastCursor: () => undefined, terminal: () => undefined, log: () => {} };

describe("Delivery's subagent links", () => {
  it("keeps at most maxLinks links, forgetting the oldest first, grandchildren included", () => {
    const delivery = new Delivery(source, { maxLinks: 3 });
    delivery.linkChild("p", "c1");
    delivery.linkChild("p", "c2");
    delivery.linkChild("c2", "g1");
    expect(delivery.descendantsOf("p")).toEqual(["c1", "c2", "g1"]);
    delivery.linkChild("p", "c3");
    delivery.linkChild("p", "c4");
    expect(delivery.linkCount).toBe(3);
    expect(delivery.descendantsOf("p")).toEqual(["c3", "c4"]); // c1 and c2 forgotten; g1's link stays
    expect(delivery.descendantsOf("c2")).toEqual(["g1"]);
    for (let i = 0; i < 100; i++) delivery.linkChild(`p${i}`, `c${i}x`);
    expect(delivery.linkCount).toBe(3);
  });

  it("defaults to DEFAULT_MAX_SUBAGENT_LINKS, and refuses a bound below 1", () => {
    const delivery = new Delivery(source);
    for (let i = 0; i < DEFAULT_MAX_SUBAGENT_LINKS + 5; i++) delivery.linkChild("root", `child-${i}`);
    expect(delivery.linkCount).toBe(DEFAULT_MAX_SUBAGENT_LINKS);
    expect(delivery.descendantsOf("root")[0]).toBe("child-5");
    expect(() => new Delivery(source, { maxLinks: 0 })).toThrow(RangeError);
  });
});
