#!/usr/bin/env bash
# install.sh installs what the legacy Node.js SDK test (e2e/azurestorage)
# needs:
#   - Node.js and npm, from the distribution's packages, when npm is
#     missing and we are root (apt-get; Debian and Ubuntu). Elsewhere it
#     says what to install and stops.
#   - azure-storage 2.10.7 and its dependencies, pinned in
#     e2e/azurestorage/package-lock.json, with `npm ci` into
#     e2e/azurestorage/node_modules, which git ignores.
# It is idempotent and quiet when everything is already in place.
#
# Usage: infra/azurestorage/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${root}/e2e/azurestorage"

# shellcheck source=../lib/apt.sh
source "${root}/infra/lib/apt.sh"

if ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "Installing nodejs and npm with apt-get"
		apt_get update -qq
		apt_get install -y -qq --no-install-recommends nodejs npm >/dev/null
	else
		echo "install.sh: npm is required for the azure-storage test: install the nodejs and npm packages (as root: apt-get install nodejs npm)" >&2
		exit 1
	fi
fi

# npm ci wipes and reinstalls node_modules; skip it when the installed tree
# already matches the lockfile (npm records it in node_modules/.package-lock.json).
lock="${dir}/package-lock.json"
installed="${dir}/node_modules/.package-lock.json"
if [ -f "${installed}" ] && [ "${installed}" -nt "${lock}" ] && [ -f "${dir}/node_modules/azure-storage/package.json" ]; then
	exit 0
fi
echo "Installing azure-storage (the legacy Node.js SDK) into ${dir}/node_modules"
npm ci --prefix "${dir}" --no-audit --no-fund --loglevel=error >/dev/null
