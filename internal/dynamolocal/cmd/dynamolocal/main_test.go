package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

func TestRunServesUntilCanceled(t *testing.T) {
	t.Parallel()
	if os.Getenv(dynamolocal.EnvEndpoint) != "" {
		t.Skip("a shared endpoint is configured; not starting a second JVM")
	}
	dynamolocal.Endpoint(t) // skips, or fails under CI, without DynamoDB Local
	file := filepath.Join(t.TempDir(), "dynamodb.endpoint")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-endpoint-file", file}, &stdout) }()

	var endpoint string
	for deadline := time.Now().Add(time.Minute); endpoint == ""; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil {
			endpoint = strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("no endpoint file after a minute")
		}
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		default:
		}
	}
	ctxCall := dynamolocal.Context(t, 30*time.Second)
	if _, err := dynamolocal.NewClient(endpoint).ListTables(ctxCall, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables at %s: %v", endpoint, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(stdout.String(), endpoint) {
		t.Errorf("stdout %q does not print the endpoint %q", stdout.String(), endpoint)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("endpoint file left behind: %v", err)
	}
}

func TestRunBadFlag(t *testing.T) {
	t.Parallel()
	if err := run(t.Context(), []string{"-nope"}, &bytes.Buffer{}); err == nil {
		t.Error("run with an unknown flag succeeded")
	}
}

func TestRunNotInstalled(t *testing.T) {
	t.Setenv(dynamolocal.EnvDir, t.TempDir())
	err := run(t.Context(), nil, &bytes.Buffer{})
	if !errors.Is(err, dynamolocal.ErrNotInstalled) || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("run = %v; want ErrNotInstalled with the install hint", err)
	}
}
