# apt.sh is sourced by the install scripts that install Debian packages.
# shellcheck shell=bash

# apt_get runs apt-get, waiting for another apt or dpkg (unattended-upgrades,
# a package manager window, another install) to let go of its locks instead
# of failing at once: dpkg's frontend lock through DPkg::Lock::Timeout, and
# the package lists' lock, which apt-get update does not wait for, by
# retrying every APT_LOCK_POLL seconds (default 5). APT_LOCK_TIMEOUT
# (seconds, default 600) bounds the wait.
apt_get() {
	local timeout="${APT_LOCK_TIMEOUT:-600}" started="${SECONDS}" said="" out status
	while :; do
		status=0
		out="$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="${timeout}" "$@" 2>&1)" || status=$?
		if [ "${status}" = 0 ]; then
			[ -z "${out}" ] || echo "${out}"
			return 0
		fi
		if ! grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock' <<<"${out}"; then
			echo "${out}" >&2
			return "${status}"
		fi
		if [ $((SECONDS - started)) -ge "${timeout}" ]; then
			echo "${out}" >&2
			echo "install.sh: another apt or dpkg still holds its lock after ${timeout}s: let it finish (or stop it) and run this again; APT_LOCK_TIMEOUT=seconds waits longer" >&2
			return "${status}"
		fi
		if [ -z "${said}" ]; then
			echo "install.sh: another apt or dpkg holds its lock; waiting up to ${timeout}s for it to finish" >&2
			said=1
		fi
		sleep "${APT_LOCK_POLL:-5}"
	done
}
