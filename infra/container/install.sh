#!/usr/bin/env bash
# install.sh installs what `make image` and the container image test
# (cmd/tablebridge TestContainerImage) need: buildah, which builds the image
# FROM scratch without pulling any base image, podman, which runs it, and
# runc, the OCI runtime podman is told to use (--runtime runc): the default
# crun refuses this kind of machine's cgroup setup and rlimits. All three
# come from Debian. It installs only as root with apt-get (Debian and
# Ubuntu); elsewhere it says what to install and goes on (the test then
# skips loudly, or fails in CI). It is idempotent and quiet when everything
# is already in place.
#
# Usage: infra/container/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/apt.sh
source "${root}/infra/lib/apt.sh"

have_tools() {
	command -v buildah >/dev/null 2>&1 && command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1
}

have_tools && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing buildah, podman and runc with apt-get"
	apt_get update -qq
	apt_get install -y -qq --no-install-recommends buildah podman runc >/dev/null
	have_tools || { echo "install.sh: buildah, podman or runc still missing after apt-get install" >&2; exit 1; }
else
	echo "install.sh: warning: buildah, podman or runc is missing; install Debian's buildah, podman and runc (as root: apt-get install buildah podman runc)" >&2
fi
