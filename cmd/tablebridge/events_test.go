package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
)

func TestWriteEvents(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := writeEvents(dir, now, io.Discard); err != nil {
		t.Fatal(err)
	}
	samples, err := lambdafn.Samples(now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.File())))
		if err != nil {
			t.Fatalf("%s: %v", s.File(), err)
		}
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(b, &ev); err != nil || ev.HTTPMethod != s.Event.HTTPMethod || ev.Path != s.Event.Path {
			t.Errorf("%s decodes to %s %s (%v), want %s %s", s.File(), ev.HTTPMethod, ev.Path, err, s.Event.HTTPMethod, s.Event.Path)
		}
	}
}

func TestEventsRefusals(t *testing.T) {
	if err := runEvents([]string{"-dir", t.TempDir(), "extra"}); err == nil {
		t.Error("a stray argument was accepted")
	}
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeEvents(notADir, time.Now(), io.Discard); err == nil {
		t.Error("writing under a regular file succeeded")
	}
}
