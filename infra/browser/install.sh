#!/usr/bin/env bash
# install.sh installs what the browser end-to-end test (e2e/browser) needs:
#   - Chromium, from the distribution's packages, when /usr/bin/chromium is
#     missing and we are root (apt-get; Debian and Ubuntu). Elsewhere it
#     says what to install and goes on: TABLEBRIDGE_CHROMIUM may name any
#     Chromium or Chrome binary.
#   - The page's npm packages (@azure/data-tables and esbuild, pinned in
#     e2e/browser/package-lock.json), with `npm ci` into
#     e2e/browser/node_modules, which git ignores.
# It is idempotent and quiet when everything is already in place.
#
# Usage: infra/browser/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
page="${root}/e2e/browser"

have_chromium() {
	[ -n "${TABLEBRIDGE_CHROMIUM:-}" ] && [ -x "${TABLEBRIDGE_CHROMIUM}" ] && return 0
	[ -x /usr/bin/chromium ] && return 0
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1
}

# shellcheck source=../lib/apt.sh
source "${root}/infra/lib/apt.sh"

if ! have_chromium; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "Installing chromium with apt-get"
		apt_get update -qq
		apt_get install -y -qq --no-install-recommends chromium >/dev/null
	else
		echo "install.sh: warning: no Chromium found; install the chromium package (as root: apt-get install chromium) or set TABLEBRIDGE_CHROMIUM" >&2
	fi
fi

command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required for the browser test's page (@azure/data-tables, esbuild)" >&2; exit 1; }

# npm ci wipes and reinstalls node_modules; skip it when the installed tree
# already matches the lockfile (npm records it in node_modules/.package-lock.json).
lock="${page}/package-lock.json"
installed="${page}/node_modules/.package-lock.json"
if [ -f "${installed}" ] && [ "${installed}" -nt "${lock}" ] &&
	[ -f "${page}/node_modules/@azure/data-tables/package.json" ] && [ -f "${page}/node_modules/esbuild/package.json" ]; then
	exit 0
fi
echo "Installing the browser test's npm packages into ${page}/node_modules"
npm ci --prefix "${page}" --no-audit --no-fund --loglevel=error >/dev/null
