/** Tests of `muse-host` argument parsing and model loading. */
import { describe, expect, it } from "vitest";
import { loadServeModels, parseServeArgs } from "../../src/host/run-cli.js";
import { fixture } from "./host-process.js";

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
      transport: "stdio",
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
    expect(() => parseServeArgs(["--ws", "8080"])).toThrow(/not implemented/);
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
