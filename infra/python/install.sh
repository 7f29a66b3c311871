#!/usr/bin/env bash
# install.sh installs what the Python SDK end-to-end test (e2e/python) needs:
# the Python SDK for Azure Tables (azure-data-tables), from Debian's
# python3-azure package, which bundles the Azure SDK for Python, run by the
# system interpreter /usr/bin/python3. PyPI is not used: Debian's package is
# pinned by the distribution release, and the test records its version.
# It installs only as root with apt-get (Debian and Ubuntu); elsewhere it says
# what to install and goes on (the test then skips loudly, or fails in CI).
# It is idempotent and quiet when everything is already in place.
#
# Usage: infra/python/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/apt.sh
source "${root}/infra/lib/apt.sh"

have_sdk() {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import azure.data.tables' >/dev/null 2>&1
}

have_sdk && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing python3-azure (azure-data-tables) with apt-get"
	apt_get update -qq
	apt_get install -y -qq --no-install-recommends python3 python3-azure >/dev/null
	have_sdk || { echo "install.sh: python3-azure installed but 'import azure.data.tables' fails" >&2; exit 1; }
else
	echo "install.sh: warning: the Python SDK (azure-data-tables) is missing; install Debian's python3-azure (as root: apt-get install python3-azure)" >&2
fi
