// build.mjs bundles src/page.js with @azure/data-tables for the browser,
// the way a web app ships it: esbuild resolves the package's "browser"
// export, so the page runs the SDK's real browser build.
//
// Usage: node build.mjs [outfile]   (default: dist/page.js)
import { build } from "esbuild";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outfile = resolve(process.argv[2] ?? resolve(here, "dist/page.js"));

await build({
  absWorkingDir: here,
  entryPoints: ["src/page.js"],
  bundle: true,
  platform: "browser",
  format: "esm",
  target: ["chrome110"],
  outfile,
  logLevel: "warning",
});
