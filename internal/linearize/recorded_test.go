package linearize_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tablebridge/tablebridge/internal/linearize"
)

// TestRecordedAnomalies checks the histories that caught an anomaly, kept
// (shrunk) under testdata once its cause was fixed: the checker must still
// find in each what it found then. The fix itself has a test of its own
// next to it, and the configuration that found it keeps running.
func TestRecordedAnomalies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		// why is what went wrong, and where it was fixed.
		why string
		// problem is a problem the check must report ("" for none);
		// illegal, that no order explains the history.
		problem string
		illegal bool
	}{
		{"dynamodb-reused-etag.json",
			"c0.7, an Insert Or Merge that lost several races for p0/r5, raised its Timestamp past the version c2.53.0 it had learned of, as c6.50 " +
				"did; c6.50 landed, and the entity was deleted; c0.7 then created it anew with the raised Timestamp, so two versions " +
				"answered one ETag (fixed in dynamostore's raiseTimestamps: TestRecreatedEntityKeepsNoRaisedTimestamp)",
			`ETag W/"datetime'2026-11-27T18%3A56%3A04.7610011Z'" of p0/r5 names two versions: c0.7`, false},
		{"dynamodb-large-batch-index.json",
			"c3.23, a batch whose first action inserts r1, which exists (409), and whose second merges a payload larger than a DynamoDB item " +
				"into r3 with a stale If-Match, answered 412 at the merge: the store read r3 before sending anything and returned its failure " +
				"without asking whether an earlier action failed (fixed in dynamostore's write: TestBatchNamesItsFirstFailingOp)",
			"", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, err := linearize.Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// Proving that no order exists takes the search seconds;
			// where the problem is the finding, a glance will do.
			timeout := time.Second
			if tc.illegal {
				timeout = time.Minute
			}
			r := linearize.Check(h, timeout)
			found := tc.problem == ""
			for _, p := range r.Problems {
				found = found || strings.Contains(p, tc.problem)
			}
			if !found || tc.illegal && r.Result != porcupine.Illegal {
				t.Errorf("%s: the check found %v, %q; want %q (and no order: %v)\n(%s)", tc.file, r.Result, r.Problems, tc.problem, tc.illegal, tc.why)
			}
		})
	}
}
