// Package container tests the tablebridge container image (docs/serve.md,
// "Container image"): it builds the image with infra/container/build.sh
// (buildah, FROM scratch), runs it with podman on Debian's runc, and drives
// it with the official Go SDK: a connection string like
// UseDevelopmentStorage=true's, data kept in the /data volume across a
// restart, a non-root user, a clean stop on SIGTERM, and HTTPS with
// -tls-self-signed. It logs the image's size and the time from `podman run`
// to the first answer.
//
// The tools are found with serveproc.Require: missing, the test skips
// loudly on a developer machine and fails under CI; infra/container/install.sh
// (part of make tools) installs them.
package container
