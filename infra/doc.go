// Package infra holds no Go code: the install scripts of the test tools
// (dynamodb-local, azurite, browser, with their shared shell helpers in
// lib/), the Lambda make targets (lambda.mk) and the sam local settings.
// Its tests run the shell helpers.
package infra
