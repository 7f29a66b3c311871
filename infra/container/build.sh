#!/usr/bin/env bash
# build.sh builds the tablebridge OCI image with buildah, FROM scratch: the
# static tablebridge binary, the CA certificates (for -store dynamodb and
# -oauth verified, which call AWS and OIDC issuers over HTTPS) and an empty
# /data owned by the unprivileged user the image runs as. No base image is
# pulled, so it builds offline. `make image` and the image test both run it.
#
# In the image, `serve` listens on 0.0.0.0:10002 with its data in the /data
# volume, as 65532:65532; arguments after the image name are more serve
# flags (a later flag wins over these defaults). Go's serve handles SIGTERM
# itself, finishing requests in flight and closing the store, so `podman
# stop` / `docker stop` end it cleanly as PID 1.
#
# Usage: infra/container/build.sh [IMAGE]   (default: localhost/tablebridge:latest)
# GO (default go) is the Go command.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
image="${1:-localhost/tablebridge:latest}"
certs=/etc/ssl/certs/ca-certificates.crt
uid=65532

for tool in buildah; do
	command -v "${tool}" >/dev/null 2>&1 || { echo "build.sh: ${tool} is missing: run infra/container/install.sh" >&2; exit 1; }
done
[ -r "${certs}" ] || { echo "build.sh: no CA certificates at ${certs} (Debian's ca-certificates package)" >&2; exit 1; }

work="$(mktemp -d)"
ctr=""
cleanup() {
	[ -z "${ctr}" ] || buildah rm "${ctr}" >/dev/null 2>&1 || true
	rm -rf "${work}"
}
trap cleanup EXIT

# Static, stripped, and stamped with the commit when the tree is a clone.
(cd "${root}" && CGO_ENABLED=0 "${GO:-go}" build -trimpath -buildvcs=auto -ldflags='-s -w' -o "${work}/tablebridge" ./cmd/tablebridge)
mkdir -p "${work}/data"

ctr="$(buildah from --name "tablebridge-build-$$" scratch)"
buildah copy --quiet "${ctr}" "${work}/tablebridge" /tablebridge
buildah copy --quiet "${ctr}" "${certs}" /etc/ssl/certs/ca-certificates.crt
buildah copy --quiet --chown "${uid}:${uid}" "${ctr}" "${work}/data" /data
buildah config \
	--entrypoint '["/tablebridge", "serve", "-listen", "0.0.0.0:10002", "-data", "/data"]' \
	--cmd '' \
	--user "${uid}:${uid}" \
	--port 10002/tcp \
	--volume /data \
	--stop-signal SIGTERM \
	--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
	--label org.opencontainers.image.title=tablebridge \
	--label org.opencontainers.image.description="Azure Table Storage-compatible server (tablebridge serve)" \
	--label org.opencontainers.image.source=https://github.com/tablebridge/tablebridge \
	"${ctr}"
buildah commit --quiet --rm "${ctr}" "${image}" >/dev/null
ctr=""
echo "built ${image}"
