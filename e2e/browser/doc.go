// Package browser holds the end-to-end test that runs the official
// JavaScript SDK, @azure/data-tables, in headless Chromium against a real
// `tablebridge serve` process.
//
// The page (index.html and src/page.js, bundled with esbuild by build.mjs)
// is served from one loopback port and talks to tablebridge on another, so
// the browser enforces CORS exactly as it would for a deployed web app: the
// test sets a CORS rule for the page's origin through the Go SDK before it
// loads the page. The SDK's browser build cannot sign with Shared Key, so
// the page authenticates with a table SAS, as browser apps do.
//
// TestNodeSDK runs the same SDK from Node.js (node-smoke.mjs) with the
// account key, so its SharedKey signing is proven too.
//
// Tools: Chromium (/usr/bin/chromium, or TABLEBRIDGE_CHROMIUM), Node.js and
// npm, and this folder's node_modules (npm ci). infra/browser/install.sh
// installs all three. Without them the test skips on a developer machine
// and fails when CI is set.
package browser
