#!/usr/bin/env bash
# install.sh installs what the Azure CLI end-to-end test (e2e/azcli) needs:
# the Azure CLI (`az storage table`, `az storage entity`), from Debian's
# azure-cli package. It installs only as root with apt-get (Debian and
# Ubuntu); elsewhere it says what to install and goes on (the test then
# skips loudly, or fails in CI). TABLEBRIDGE_AZ may name another az binary.
# It is idempotent and quiet when everything is already in place.
#
# Usage: infra/azure-cli/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/apt.sh
source "${root}/infra/lib/apt.sh"

have_az() {
	[ -n "${TABLEBRIDGE_AZ:-}" ] && [ -x "${TABLEBRIDGE_AZ}" ] && return 0
	[ -x /usr/bin/az ]
}

have_az && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing azure-cli with apt-get"
	apt_get update -qq
	apt_get install -y -qq --no-install-recommends azure-cli >/dev/null
	have_az || { echo "install.sh: azure-cli installed but /usr/bin/az is missing" >&2; exit 1; }
else
	echo "install.sh: warning: the Azure CLI is missing; install Debian's azure-cli (as root: apt-get install azure-cli)" >&2
fi
