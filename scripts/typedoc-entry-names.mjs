/**
 * typedoc plugin for the one docs site: name each entry point's page after the specifier an app
 * imports (`@muse-code/sdk`, `@muse-code/sdk/node`, …) rather than after its file (`index`,
 * `node`, …), and each guide after its `# heading` rather than its file name.
 */
import { Converter, ReflectionKind } from "typedoc";

/** Entry file's module name (as typedoc derives it from the path) → the import specifier. */
const SPECIFIERS = {
  index: "@muse-code/sdk",
  framing: "@muse-code/sdk/framing",
  websocket: "@muse-code/sdk/websocket",
  ui: "@muse-code/sdk/ui",
  node: "@muse-code/sdk/node",
  host: "@muse-code/sdk/host",
  testing: "@muse-code/sdk/testing",
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
