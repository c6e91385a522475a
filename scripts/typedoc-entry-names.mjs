/**
 * typedoc plugin for the one docs site: name each entry point's page after the specifier an app
 * imports (`@muse-code/sdk`, `@muse-code/sdk/node`, `@muse-code/host`, …) rather than after its
 * folder (`src`, `src/node`, …), and each guide after its `# heading` rather than its file name.
 */
import { Converter, ReflectionKind } from "typedoc";

/**
 * Entry file's module name (as typedoc derives it from the path, relative to the entry files'
 * common folder, the repository root) → the import specifier.
 */
const SPECIFIERS = {
  src: "@muse-code/sdk",
  "src/framing": "@muse-code/sdk/framing",
  "src/websocket": "@muse-code/sdk/websocket",
  "src/ui": "@muse-code/sdk/ui",
  "src/session": "@muse-code/sdk/session",
  "src/react": "@muse-code/sdk/react",
  "src/node": "@muse-code/sdk/node",
  "src/testing": "@muse-code/sdk/testing",
  "packages/host/src": "@muse-code/host",
};

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const text = document.content.map((part) => part.text).join("");
    const heading = /^#\s+(.+?)\s*$/m.exec(text);
    if (heading !== null) document.name = heading[1].replace(/`/g, "");
  });
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const specifier = SPECIFIERS[module.name];
      if (specifier !== undefined) module.name = specifier;
    }
  });
}
