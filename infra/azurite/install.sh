#!/usr/bin/env bash
# install.sh installs Azurite, the Azure Storage emulator, for the tests that
# prove tablebridge migrate reads the emulator's wire format: the npm package
# azurite, pinned, under the repository's ignored .tools folder. It is
# idempotent and quiet when the pinned version is already there.
#
# Usage: infra/azurite/install.sh   (from anywhere inside the repo)
# Then:  node .tools/azurite/node_modules/azurite/dist/src/table/main.js \
#          --tableHost 127.0.0.1 --tablePort N --inMemoryPersistence \
#          --skipApiVersionCheck --loose --disableTelemetry
#        internal/azurite does exactly this on a free port.
set -euo pipefail

version="3.37.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
prefix="${root}/.tools/azurite"
pkg="${prefix}/node_modules/azurite"
entry="${pkg}/dist/src/table/main.js"

installed_version() {
	[ -f "${pkg}/package.json" ] || return 0
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "${pkg}/package.json" | head -n 1
}

if [ "$(installed_version)" = "${version}" ] && [ -f "${entry}" ]; then
	exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required to install Azurite" >&2; exit 1; }
command -v node >/dev/null 2>&1 || echo "install.sh: warning: node is not on PATH; Azurite needs Node.js" >&2

mkdir -p "${prefix}"
echo "Installing azurite@${version} into ${prefix}"
# --save-exact pins the version in .tools/azurite/package.json too, so a
# later plain `npm install` there cannot drift to a newer release.
npm install --prefix "${prefix}" --save-exact --no-audit --no-fund --loglevel=error "azurite@${version}" >/dev/null

if [ ! -f "${entry}" ]; then
	echo "install.sh: ${entry} not found after installing azurite@${version}" >&2
	exit 1
fi
echo "Azurite ${version} is in ${pkg}"
