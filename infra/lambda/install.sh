#!/usr/bin/env bash
# install.sh installs what the Lambda tests and the template check need:
#   - aws-lambda-rie, the AWS Lambda Runtime Interface Emulator, built from
#     the Go module proxy at the pinned version into .tools/bin (the
#     functions tests run every bootstrap under it).
#   - cfn-lint, for `make lint-template`. An existing cfn-lint on PATH is
#     used as is. Otherwise it is installed from PyPI into a virtualenv
#     under .tools/cfn-lint (python3-venv from apt-get when run as root and
#     missing); Debian has no cfn-lint package. When that is impossible it
#     says so and goes on: make lint-template then fails under CI and
#     warns elsewhere.
# It is idempotent and quiet when everything is already in place.
#
# Usage: infra/lambda/install.sh   (from anywhere inside the repo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${root}/.tools/bin"
mkdir -p "${bin}"

RIE_VERSION="v0.0.0-20261030222936-bef5c4ba774d"
RIE_STAMP="${bin}/.aws-lambda-rie-${RIE_VERSION}"
if [ ! -x "${bin}/aws-lambda-rie" ] || [ ! -e "${RIE_STAMP}" ]; then
	echo "Installing aws-lambda-rie ${RIE_VERSION} into .tools/bin"
	(cd "${root}" && GOBIN="${bin}" go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@${RIE_VERSION}")
	rm -f "${bin}"/.aws-lambda-rie-*
	touch "${RIE_STAMP}"
fi

CFN_LINT_VERSION="1.51.0"
if command -v cfn-lint >/dev/null 2>&1 || [ -x "${bin}/cfn-lint" ]; then
	exit 0
fi
venv="${root}/.tools/cfn-lint"
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		# shellcheck source=../lib/apt.sh
		source "${root}/infra/lib/apt.sh"
		echo "Installing python3-venv with apt-get (for cfn-lint)"
		apt_get update -qq
		apt_get install -y -qq --no-install-recommends python3-venv >/dev/null
	fi
fi
echo "Installing cfn-lint ${CFN_LINT_VERSION} from PyPI into .tools/cfn-lint"
if python3 -m venv "${venv}" >/dev/null 2>&1 && "${venv}/bin/pip" install -q "cfn-lint==${CFN_LINT_VERSION}"; then
	ln -sf "${venv}/bin/cfn-lint" "${bin}/cfn-lint"
else
	echo "install.sh: warning: could not install cfn-lint (needs python3-venv and PyPI); install it yourself (pipx install cfn-lint) or make lint-template skips it" >&2
fi
