package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
)

func TestWriteEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := writeEvents(dir, now, io.Discard); err != nil {
		t.Fatal(err)
	}
	samples, err := gatewayevent.Samples(now)
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
	t.Parallel()
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

// TestEventsFixturesAreStable: the tracked events/ are what
// events -fixture-date (make events-fixtures) writes, byte for
// byte, every time, and nothing else (a file the generator no longer
// writes would linger as a stale fixture); make events writes elsewhere
// (build/events).
func TestEventsFixturesAreStable(t *testing.T) {
	t.Parallel()
	tracked := filepath.Join("..", "..", "..", "..", "events")
	var runs [2]string
	for i := range runs {
		runs[i] = t.TempDir()
		if err := runEvents([]string{"-dir", runs[i], "-fixture-date"}); err != nil {
			t.Fatal(err)
		}
	}
	have := filesUnder(t, tracked)
	want := filesUnder(t, runs[0])
	if len(have) == 0 {
		t.Fatal("events/ holds no files")
	}
	for _, rel := range have {
		if !slices.Contains(want, rel) {
			t.Errorf("events/%s is not a file the generator writes; delete it", rel)
		}
	}
	for _, rel := range want {
		if !slices.Contains(have, rel) {
			t.Errorf("events/%s is missing; run make events-fixtures", rel)
			continue
		}
		b, err := os.ReadFile(filepath.Join(tracked, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range runs {
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil || !bytes.Equal(got, b) {
				t.Errorf("%s: regenerated file differs from the tracked one (%v)", rel, err)
			}
		}
	}
}

// filesUnder returns the regular files under dir, slash-separated and
// relative to dir, sorted.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("walking %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}
