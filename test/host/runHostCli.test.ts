/** Tests of `muse-host` argument parsing and model loading. */
import { describe, expect, it } from "vitest";
import { loadServeModels } from "../../packages/host/src/serve/runHostCli.js";
import { parseServeArgs } from "../../packages/host/src/serve/serveArgs.js";
import { fixture } from "./hostProcess.js";

describe("parseServeArgs", () => {
  it("parses every flag, in both --flag value and --flag=value forms", () => {
    const options = parseServeArgs([
      "--stdio",
      "--script",
      "a.json",
      "--data=/tmp/d",
      "--model",
      "fast=f.json",
      "--model=slow=s.json",
      "--default-model",
      "fast",
      "--kill-grace-ms",
      "500",
      "--output-cap-bytes=1024",
    ]);
    expect(options).toEqual({
      stdio: true,
      allowOrigins: [],
      allowRemote: false,
      ui: false,
      script: "a.json",
      dataDir: "/tmp/d",
      models: new Map([
        ["fast", "f.json"],
        ["slow", "s.json"],
      ]),
      defaultModel: "fast",
      killGraceMs: 500,
      outputCapBytes: 1024,
    });
  });

  it("rejects missing transport, missing script, bad numbers, bad --model and unknown flags", () => {
    expect(() => parseServeArgs(["--script", "a.json"])).toThrow(/--stdio/);
    expect(() => parseServeArgs(["--stdio"])).toThrow(/--script/);
    expect(() => parseServeArgs(["--stdio", "--script", "a", "--kill-grace-ms", "-1"])).toThrow(/non-negative integer/);
    expect(() => parseServeArgs(["--stdio", "--model", "noequals"])).toThrow(/NAME=PATH/);
    expect(() => parseServeArgs(["--stdio", "--script", "a", "--frobnicate"])).toThrow(/unknown option/);
    expect(() => parseServeArgs(["--stdio", "--script"])).toThrow(/needs a value/);
  });

  it("parses --ws [ADDR:]PORT and the WebSocket flags; --stdio and --ws combine", () => {
    const options = parseServeArgs([
      "--ws",
      "8080",
      "--stdio",
      "--script",
      "a.json",
      "--token-file",
      "t.txt",
      "--allow-origin",
      "http://localhost:5173",
      "--allow-origin=http://example.test",
      "--ui-dir",
      "/srv/ui",
      "--max-message-bytes",
      "1024",
      "--max-send-queue-bytes=65536",
      "--max-connections",
      "10",
    ]);
    expect(options).toMatchObject({
      stdio: true,
      ws: { address: "127.0.0.1", port: 8080 },
      tokenFile: "t.txt",
      allowOrigins: ["http://localhost:5173", "http://example.test"],
      allowRemote: false,
      ui: true,
      uiDir: "/srv/ui",
      maxMessageBytes: 1024,
      maxSendQueueBytes: 65536,
      maxConnections: 10,
    });
    expect(parseServeArgs(["--ws", "[::1]:0", "--script", "a"]).ws).toEqual({ address: "::1", port: 0 });
    expect(parseServeArgs(["--ws", "0.0.0.0:9", "--allow-remote", "--script", "a"])).toMatchObject({
      ws: { address: "0.0.0.0", port: 9 },
      allowRemote: true,
      stdio: false,
    });
    expect(() => parseServeArgs(["--ws", "70000", "--script", "a"])).toThrow(/PORT 0..65535/);
    expect(() => parseServeArgs(["--ws", "example.com:80", "--script", "a"])).toThrow(/IP address or localhost/);
    expect(() => parseServeArgs(["--stdio", "--script", "a", "--ui"])).toThrow(/--ui needs --ws/);
    expect(() => parseServeArgs(["--stdio", "--script", "a", "--token-file", "t", "--allow-remote"])).toThrow(/--token-file, --allow-remote need --ws/);
    expect(() => parseServeArgs(["--ws", "0", "--script", "a", "--max-connections", "0"])).toThrow(/positive integer/);
  });
});

describe("loadServeModels", () => {
  it("names --script 'default' and adds every --model", () => {
    const { models, defaultModel } = loadServeModels(
      parseServeArgs(["--stdio", "--script", fixture("hello.json"), "--model", `two=${fixture("two-tools.json")}`]),
    );
    expect([...models.keys()]).toEqual(["default", "two"]);
    expect(defaultModel).toBe("default");
  });

  it("honours --default-model and rejects one that is not loaded", () => {
    const args = ["--stdio", "--script", fixture("hello.json"), "--model", `two=${fixture("two-tools.json")}`];
    expect(loadServeModels(parseServeArgs([...args, "--default-model", "two"])).defaultModel).toBe("two");
    expect(() => loadServeModels(parseServeArgs([...args, "--default-model", "three"]))).toThrow(/not a loaded model/);
  });
});
