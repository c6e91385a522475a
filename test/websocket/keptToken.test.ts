import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../src/session/index.js";
import { keptToken, type KeptTokenOptions, type TokenStorage } from "../../src/websocket/index.js";

/** A page's address and history: replaceState changes the address as a browser's does. */
function page(address: string, state: unknown = { app: 1 }) {
  const url = new URL(address);
  const calls: Array<{ data: unknown; url: string }> = [];
  const location = {
    get hash() {
      return url.hash;
    },
    get pathname() {
      return url.pathname;
    },
    get search() {
      return url.search;
    },
    get href() {
      return url.href;
    },
  };
  const history = {
    state,
    replaceState(data: unknown, _unused: string, next?: string | URL | null) {
      calls.push({ data, url: String(next) });
      const to = new URL(String(next), url);
      url.hash = to.hash;
      url.pathname = to.pathname;
      url.search = to.search;
    },
  };
  return { location, history, calls };
}

const warnings = (): { onWarning: (m: string) => void; seen: string[] } => {
  const seen: string[] = [];
  return { onWarning: (m) => seen.push(m), seen };
};

describe("keptToken", () => {
  it("reads the token from the fragment, keeps it, and takes it out of the address (path and query stay)", () => {
    const p = page("http://127.0.0.1:8080/chat/?room=7#token=s3cr%2Bet");
    const storage = memoryStorage();
    expect(keptToken({ storage, location: p.location, history: p.history })).toBe("s3cr+et");
    expect(storage.getItem("muse:token")).toBe("s3cr+et");
    expect(p.location.href).toBe("http://127.0.0.1:8080/chat/?room=7");
    expect(p.calls).toEqual([{ data: { app: 1 }, url: "/chat/?room=7" }]);
  });

  it("returns the kept token on a later load, without touching the address", () => {
    const storage = memoryStorage();
    const first = page("http://h/#token=abc");
    keptToken({ storage, location: first.location, history: first.history });
    const reload = page("http://h/");
    expect(keptToken({ storage, location: reload.location, history: reload.history })).toBe("abc");
    expect(reload.calls).toEqual([]);
    // Read once: a second call on the same load finds the address clean and returns the kept one.
    expect(keptToken({ storage, location: first.location, history: first.history })).toBe("abc");
    expect(first.calls).toHaveLength(1);
  });

  it("a token in the address wins over a kept one", () => {
    const storage = memoryStorage();
    storage.setItem("muse:token", "old");
    const p = page("http://h/#token=new");
    expect(keptToken({ storage, location: p.location, history: p.history })).toBe("new");
    expect(storage.getItem("muse:token")).toBe("new");
  });

  it("keeps the other fragment parameters, and uses the key and param given", () => {
    const storage = memoryStorage();
    const p = page("http://h/app#view=log&k=xyz&tab=2");
    expect(keptToken({ storage, key: "chat:token", param: "k", location: p.location, history: p.history })).toBe("xyz");
    expect(storage.getItem("chat:token")).toBe("xyz");
    expect(p.location.href).toBe("http://h/app#view=log&tab=2");
    // A fragment without the parameter is the app's own: left as it is.
    const other = page("http://h/app#/settings");
    expect(keptToken({ storage, key: "chat:token", param: "k", location: other.location, history: other.history })).toBe("xyz");
    expect(other.calls).toEqual([]);
    // A name that only begins like the parameter is another parameter.
    const near = page("http://h/#kk=1");
    expect(keptToken({ storage: memoryStorage(), param: "k", location: near.location, history: near.history })).toBeUndefined();
    expect(near.calls).toEqual([]);
  });

  it("undefined when neither the address nor the storage has one; an empty #token= is taken out and reads as none", () => {
    const none = page("http://h/");
    expect(keptToken({ storage: memoryStorage(), location: none.location, history: none.history })).toBeUndefined();
    const empty = page("http://h/?q=1#token=");
    expect(keptToken({ storage: memoryStorage(), location: empty.location, history: empty.history })).toBeUndefined();
    expect(empty.location.href).toBe("http://h/?q=1");
  });

  it("a storage that throws: the token still serves this load, still leaves the address, and a warning says it was not kept", () => {
    const full: TokenStorage = {
      getItem: () => null,
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
    };
    const p = page("http://h/#token=abc");
    const w = warnings();
    expect(keptToken({ storage: full, location: p.location, history: p.history, onWarning: w.onWarning })).toBe("abc");
    expect(p.location.href).toBe("http://h/");
    expect(w.seen).toEqual([expect.stringContaining("the token could not be kept")]);
    const unreadable: TokenStorage = {
      getItem: () => {
        throw new Error("SecurityError");
      },
      setItem: () => {},
    };
    const later = page("http://h/");
    expect(keptToken({ storage: unreadable, location: later.location, history: later.history, onWarning: w.onWarning })).toBeUndefined();
    expect(w.seen[1]).toContain("could not be read");
  });

  it("a history that refuses replaceState: a warning, and the token is still returned and kept", () => {
    const p = page("http://h/#token=abc");
    const history = {
      state: null,
      replaceState: () => {
        throw new Error("SecurityError");
      },
    };
    const storage = memoryStorage();
    const w = warnings();
    expect(keptToken({ storage, location: p.location, history, onWarning: w.onWarning })).toBe("abc");
    expect(storage.getItem("muse:token")).toBe("abc");
    expect(w.seen).toEqual([expect.stringContaining("could not be taken out of the address bar")]);
  });

  it("bad options are TypeErrors that say what to pass", () => {
    const p = page("http://h/#token=abc");
    const base = { storage: memoryStorage(), location: p.location, history: p.history };
    const bad = (options: unknown) => () => keptToken(options as KeptTokenOptions);
    expect(bad(undefined)).toThrow(new TypeError("keptToken: options must be an object with a storage (sessionStorage, localStorage, …)"));
    expect(bad({ ...base, storage: undefined })).toThrow(/keptToken: storage must have getItem and setItem/);
    expect(bad({ ...base, storage: { getItem: () => null } })).toThrow(TypeError);
    expect(bad({ ...base, key: "" })).toThrow(/keptToken: key must be a non-empty string, got ""/);
    expect(bad({ ...base, param: "a=b" })).toThrow(/keptToken: param must be a non-empty string without/);
    expect(bad({ ...base, onWarning: "loud" })).toThrow(/keptToken: onWarning must be a function/);
    expect(bad({ ...base, history: { state: null } })).toThrow(/pass options.history/);
    // Node has no location: the error says to pass one.
    expect(bad({ storage: memoryStorage() })).toThrow(/keptToken: this runtime has no location: pass options.location/);
    // Nothing was read or changed by a refused call.
    expect(p.calls).toEqual([]);
  });
});
