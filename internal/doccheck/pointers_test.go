package doccheck

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A source is text a reader follows pointers from: a Go comment (a run of
// line comments is one), a string literal of non-test Go code (messages
// such as "install it with make tools"), or a whole Markdown page,
// makefile, shell script, YAML, Python or JavaScript file with its comment
// markers taken off. The string
// literals of tests and the identifiers of Go code are sources too, read
// only for issue numbers (a test named after one).
type source struct {
	file     string // relative to the repository root, slash-separated
	line     int    // of the text's first line
	text     string
	onlyRefs bool // test data or an identifier: read for issue numbers only
}

// sourcesOf splits one file into the sources its pointers are read from.
func sourcesOf(file string, content []byte) []source {
	switch {
	case strings.HasSuffix(file, ".go"):
		return goSources(file, content)
	case strings.HasSuffix(file, ".md"):
		return []source{{file: file, line: 1, text: string(content)}}
	default:
		return []source{{file: file, line: 1, text: commentMarker.ReplaceAllString(string(content), "")}}
	}
}

// commentMarker is what starts a comment line in a makefile, a shell
// script, YAML, Python or JavaScript, taken off so that a pointer broken
// across two comment lines reads as one.
var commentMarker = regexp.MustCompile(`(?m)^[ \t]*(?:#+|//+)[ \t]?`)

// goSources returns the sources of a Go file: its comments, each run of
// line comments on consecutive lines as one, its string literals and its
// identifiers, spelt as words (TestRows12Of as "Test Rows 12 Of").
func goSources(file string, content []byte) []source {
	test := strings.HasSuffix(file, "_test.go")
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile(file, -1, len(content)), content, nil, scanner.ScanComments)
	var out []source
	lastComment := -1 // the line of the last line comment, if the last token
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		line := fset.Position(pos).Line
		switch {
		case tok == token.COMMENT && strings.HasPrefix(lit, "//"):
			if n := len(out); n > 0 && lastComment == line-1 {
				out[n-1].text += "\n" + lit[2:]
			} else {
				out = append(out, source{file: file, line: line, text: lit[2:]})
			}
			lastComment = line
			continue
		case tok == token.COMMENT:
			out = append(out, source{file: file, line: line, text: lit})
		case tok == token.STRING:
			if v, err := strconv.Unquote(lit); err == nil {
				out = append(out, source{file: file, line: line, text: v, onlyRefs: test})
			}
		case tok == token.IDENT:
			out = append(out, source{file: file, line: line, text: identWords(lit), onlyRefs: true})
		}
		lastComment = -1
	}
}

// identWords spells an identifier as words: a space where a lower-case
// letter or a digit meets an upper-case one, where a letter meets a digit,
// and for each underscore.
func identWords(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if i > 0 {
			p := id[i-1]
			lowerOrDigit, letter := p >= 'a' && p <= 'z' || p >= '0' && p <= '9', p >= 'a' && p <= 'z' || p >= 'A' && p <= 'Z'
			if lowerOrDigit && c >= 'A' && c <= 'Z' || letter && c >= '0' && c <= '9' {
				b.WriteByte(' ')
			}
		}
		if c == '_' {
			c = ' '
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pointedFiles are the files whose pointers are checked: Go files, the
// Markdown pages, the Makefile and its included makefiles, shell scripts,
// YAML, and the Python and JavaScript of the end-to-end tests and the data
// browser. Hidden directories (.git, .tools), node_modules, testdata
// (recorded and fuzzing data) and build outputs are not the project's
// prose.
func pointedFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "bin" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".md", ".mk", ".sh", ".yaml", ".yml", ".py", ".js", ".mjs":
		default:
			if name != "Makefile" {
				return nil
			}
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The pointers a source can hold.
var (
	// makeTarget is `make <target>`; the backtick before it, if any, is
	// kept, since a quoted command is a target even when its word is also
	// English.
	makeTarget = regexp.MustCompile("(`?)\\bmake\\s+([a-z][a-z0-9_-]*)")
	// docPath is a Markdown page of the repository, with its #anchor if
	// any, and the quoted heading that may follow it: docs/serve.md,
	// "Engines", docs/serve.md ("HTTPS") or docs/serve.md#engines.
	docPath = regexp.MustCompile(`\b(docs/[A-Za-z0-9_-]+\.md|README\.md|CONTRIBUTING\.md|SECURITY\.md)(#[A-Za-z0-9_-]*)?(?:,?\s*\(?"([^"]+)")?`)
	// unquotedSection is a page, a comma and what reads as a section's
	// name without quotes, which cannot be checked: quote it, or give the
	// #anchor.
	unquotedSection = regexp.MustCompile(`\b(?:docs/[A-Za-z0-9_-]+|README|CONTRIBUTING|SECURITY)\.md,\s+\(?[A-Z][a-z]`)
	// bareReadme matches the readme's name, which outside Markdown must
	// come with .md: without it, the pointer names no section and reads
	// as a file of the comment's own directory.
	bareReadme = regexp.MustCompile(`\bREADME\b(\.md)?`)
	// trackerRef is a number in an issue tracker the reader of the code
	// does not have: the word issue, ticket or task (or their plurals) and
	// a number, after a space, a line break, '-', '_' or '#', and the
	// letters PR and a '#' number. Links into public trackers (a GitHub
	// issue's URL, go.dev/issue/N) and owner/repo#N name where they lead.
	trackerRef = regexp.MustCompile(`(?i)\b(?:issue|ticket|task)s?(?:[ \t]+|[ \t]*\n[ \t]*(?://|#)?[ \t]*|[-_])#?[0-9]+\b|\bPR[ \t]*#[0-9]+\b`)
)

// notTargets are the English words that follow "make" in the project's
// prose ("make sure", "make the client trust"). A word here is read as a
// target only in backticks (`make clean`); add one when a new sentence
// needs it.
var notTargets = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the it its one them that this these those their
		things sure every each all any no some both such more less up use sense way
		with for in of about clients error prints ne target targets harmless`) {
		notTargets[w] = true
	}
}

// pointerIndex knows what pointers may name: the make targets and each
// page's heading anchors.
type pointerIndex struct {
	root    string
	targets map[string]bool
	pages   map[string]map[string]bool // page → anchors; nil: not read yet
}

// targetLine is a rule in a makefile: "name:" or "a b:", not "NAME :=".
var targetLine = regexp.MustCompile(`(?m)^([A-Za-z0-9_./%-]+(?:[ \t]+[A-Za-z0-9_./%-]+)*)[ \t]*:([^=]|$)`)

func newPointerIndex(t *testing.T, root string) *pointerIndex {
	t.Helper()
	idx := &pointerIndex{root: root, targets: map[string]bool{}, pages: map[string]map[string]bool{}}
	// The Makefile includes infra/lambda.mk; both define targets.
	for _, mk := range []string{"Makefile", "infra/lambda.mk"} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mk)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range targetLine.FindAllStringSubmatch(string(b), -1) {
			for _, name := range strings.Fields(m[1]) {
				idx.targets[name] = true
			}
		}
	}
	for _, want := range []string{"run", "test", "check", "tools", "deploy"} {
		if !idx.targets[want] {
			t.Fatalf("no %q target found in the makefiles: the target pattern is broken", want)
		}
	}
	return idx
}

// anchorsOf returns a page's heading anchors, or false when the page does
// not exist.
func (idx *pointerIndex) anchorsOf(page string) (map[string]bool, bool) {
	if a, ok := idx.pages[page]; ok {
		return a, a != nil
	}
	b, err := os.ReadFile(filepath.Join(idx.root, filepath.FromSlash(page)))
	if err != nil {
		idx.pages[page] = nil
		return nil, false
	}
	idx.pages[page] = anchors(string(b))
	return idx.pages[page], true
}

// pointerCounts counts the pointers checked, so a pattern that stops
// matching fails the test instead of passing it.
type pointerCounts struct{ targets, pages, sections int }

// problems returns what is wrong with the pointers in s, each as
// "file:line: what".
func (idx *pointerIndex) problems(s source, n *pointerCounts) []string {
	var out []string
	at := func(offset int) string {
		return fmt.Sprintf("%s:%d", s.file, s.line+strings.Count(s.text[:offset], "\n"))
	}
	if s.onlyRefs {
		return append(out, trackerProblems(s, at)...)
	}
	for _, m := range makeTarget.FindAllStringSubmatchIndex(s.text, -1) {
		quoted, name := m[3] > m[2], s.text[m[4]:m[5]]
		if notTargets[name] && !quoted {
			continue
		}
		n.targets++
		if !idx.targets[name] {
			out = append(out, fmt.Sprintf("%s: make %s: no such target in the Makefile or infra/lambda.mk (if the word is English, not a target, see notTargets)", at(m[0]), name))
		}
	}
	for _, m := range docPath.FindAllStringSubmatchIndex(s.text, -1) {
		page := s.text[m[2]:m[3]]
		n.pages++
		a, ok := idx.anchorsOf(page)
		if !ok {
			out = append(out, fmt.Sprintf("%s: %s does not exist", at(m[0]), page))
			continue
		}
		if m[4] >= 0 {
			n.sections++
			if frag := s.text[m[4]+1 : m[5]]; !a[frag] {
				out = append(out, fmt.Sprintf("%s: %s has no heading #%s", at(m[0]), page, frag))
			}
		}
		if m[6] >= 0 {
			n.sections++
			heading := strings.Join(strings.Fields(s.text[m[6]:m[7]]), " ")
			if !a[slug(heading)] {
				out = append(out, fmt.Sprintf("%s: %s has no heading %q", at(m[0]), page, heading))
			}
		}
	}
	for _, m := range unquotedSection.FindAllStringIndex(s.text, -1) {
		out = append(out, fmt.Sprintf("%s: %s: quote the section's heading, or link its #anchor, so that it can be checked", at(m[0]), s.text[m[0]:m[1]]))
	}
	if !strings.HasSuffix(s.file, ".md") {
		for _, m := range bareReadme.FindAllStringSubmatchIndex(s.text, -1) {
			if m[2] < 0 {
				out = append(out, fmt.Sprintf("%s: README: name README.md and its section, or the docs/ page the text lives on", at(m[0])))
			}
		}
	}
	return append(out, trackerProblems(s, at)...)
}

func trackerProblems(s source, at func(offset int) string) []string {
	var out []string
	for _, m := range trackerRef.FindAllStringIndex(s.text, -1) {
		out = append(out, fmt.Sprintf("%s: %q cites an issue tracker the reader does not have: say the rule or the evidence instead", at(m[0]), s.text[m[0]:m[1]]))
	}
	return out
}

// TestPointers: every make target, Markdown page, #anchor and quoted
// heading that the project's comments, messages and docs name exists, and
// none of them cites an issue tracker's numbers: a reader of
// the code has the repository, not the tracker.
func TestPointers(t *testing.T) {
	root := repoRoot(t)
	idx := newPointerIndex(t, root)
	var n pointerCounts
	files := pointedFiles(t, root)
	for _, file := range files {
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sourcesOf(file, content) {
			for _, p := range idx.problems(s, &n) {
				t.Error(p)
			}
		}
	}
	t.Logf("checked %d files: %d make targets, %d page names, %d sections", len(files), n.targets, n.pages, n.sections)
	// The repository names dozens of each; far fewer means a pattern or
	// the file walk broke.
	if len(files) < 100 || n.targets < 50 || n.pages < 50 || n.sections < 20 {
		t.Fatalf("checked %d files: %d make targets, %d page names, %d sections: a pattern or the file walk is broken", len(files), n.targets, n.pages, n.sections)
	}
}

// TestPointersFindPlantedMistakes: each stale or tracker-only pointer
// TestPointers exists to catch is reported, and the correct spelling of
// each is not, so TestPointers cannot pass for want of matching.
func TestPointersFindPlantedMistakes(t *testing.T) {
	idx := newPointerIndex(t, repoRoot(t))
	// Kept apart so that this file cites no tracker itself.
	issue, capitalIssue, pr := "issue", "Issue", "PR"
	goFile := "package p\n\n" +
		"// Build it with make build-cli, then see docs/aws.md, \"Request and\n" +
		"// answer sizes on AWS\" and docs/aws.md, \"Answer sizes\".\n" +
		"func f() string {\n" +
		"\treturn \"install it with make tool\" // a message names a target too\n" +
		"}\n"
	cases := []struct {
		name, file, text string
		want             []string // one substring per problem, in order
	}{
		{"stale target", "a.go", goFile, []string{"a.go:3: make build-cli", "a.go:4: docs/aws.md has no heading \"Answer sizes\"", "a.go:6: make tool"}},
		{"string of a test file is test data", "a_test.go", "package p\n\nvar s = \"make widget\"\n", nil},
		{"target in backticks", "x.md", "Run `make the-best` first, then make sure it passed.", []string{"make the-best"}},
		{"existing targets", "x.md", "`make run`, make cli and make events-fixtures; make sure, make the client trust it.", nil},
		{"missing page", "Makefile", "# see docs/nosuch.md\nx:\n", []string{"Makefile:1: docs/nosuch.md does not exist"}},
		{"missing anchor", "x.md", "[x](y) and SECURITY.md#limits-and-timeouts and README.md#no-such-section", []string{"README.md has no heading #no-such-section"}},
		{"quoted heading across comment lines", "infra/x.sh", "#!/bin/sh\n# (docs/serve.md, \"Moving a data directory to\n# pebble\") and CONTRIBUTING.md (\"Adding an opration\")\n", []string{"infra/x.sh:3: CONTRIBUTING.md has no heading \"Adding an opration\""}},
		{"unquoted section", "e.yaml", "Description: see docs/aws.md, Operations and runbook.\n", []string{"e.yaml:1: docs/aws.md, O"}},
		{"bare README", "b.go", "package p\n\n// Figures: README, Migration throughput.\n", []string{"b.go:3: README: name README.md"}},
		{"tracker numbers", "c.go", "package p\n\n// As asked (" + issue + "\n// 12, item 3) and in " + issue + " #7, " + issue + "-23 and " + pr + " #4.\n// Not go.dev/issue/34540 nor github.com/o/r/issues/5 nor o/r#8.\n",
			[]string{"c.go:3: \"" + issue + "\\n 12\"", "c.go:4: \"" + issue + " #7\"", "c.go:4: \"" + issue + "-23\"", "c.go:4: \"" + pr + " #4\""}},
		{"tracker numbers in test names", "d_test.go", "package p\n\nfunc Test" + "Issue12Rows(t *testing.T) {\n\tt.Run(\"" + issue + " 3\", nil)\n}\n",
			[]string{"d_test.go:3: \"" + capitalIssue + " 12\"", "d_test.go:4: \"" + issue + " 3\""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n pointerCounts
			var got []string
			for _, s := range sourcesOf(tc.file, []byte(tc.text)) {
				got = append(got, idx.problems(s, &n)...)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d, each containing one of %q", strings.Join(got, "\n"), len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %s, want it to contain %s", i, got[i], w)
				}
			}
		})
	}
}
