package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/tablebridge/tablebridge/internal/localproc"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := localproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pages are the Markdown files whose links are checked, relative to the
// repository root.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no pages under docs/")
	}
	files := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// prose returns the lines of a Markdown file outside fenced code blocks, so
// that a shell comment in a code block ("# pass 1") does not count. Its
// callers blank inline code spans where "[x](y)" inside backticks must not
// count either; headings keep theirs, since anchors are made from them.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			out = append(out, "")
			continue
		}
		if fenced {
			out = append(out, "")
			continue
		}
		out = append(out, line)
	}
	return out
}

var (
	codeSpan = regexp.MustCompile("`[^`]*`")
	// link matches [text](target) and ![alt](target); the text may hold
	// one level of brackets, as in [`-oauth basic|verified`].
	link    = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inline  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// slug spells a heading's anchor as GitHub does: the text of any link
// kept, lower case, every character but letters, digits, spaces, '-' and
// '_' dropped (backticks, parentheses, colons, dots...), spaces turned
// into '-'.
func slug(h string) string {
	h = inline.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors lists a page's heading anchors; a repeated heading gets -1,
// -2, ... as on GitHub.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Quick start":                 "quick-start",
		"In memory (`-store memory`)": "in-memory--store-memory",
		"Bearer tokens (Microsoft Entra ID or another OIDC issuer)": "bearer-tokens-microsoft-entra-id-or-another-oidc-issuer",
		"Tables on DynamoDB: shared and per-table layouts":          "tables-on-dynamodb-shared-and-per-table-layouts",
		"Answers checked against Azure's recorded traffic":          "answers-checked-against-azures-recorded-traffic",
		"The local server: `tablebridge serve`":                     "the-local-server-tablebridge-serve",
		"Following a live application, and cutover":                 "following-a-live-application-and-cutover",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestRelativeLinks: every relative link of the project's Markdown names
// a file or directory that exists, and its #anchor, if any, a heading of
// that page.
func TestRelativeLinks(t *testing.T) {
	root := repoRoot(t)
	files := pages(t, root)
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(b))
		return cache[path], nil
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range prose(string(b)) {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				where := fmt.Sprintf("%s:%d: %s", file, i+1, m[0])
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
					if strings.HasPrefix(dest, "../") {
						t.Errorf("%s: leaves the repository", where)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
						t.Errorf("%s: %s does not exist", where, dest)
						continue
					}
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: an anchor into %s, which is not a Markdown page", where, dest)
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if !a[frag] {
					t.Errorf("%s: %s has no heading #%s", where, dest, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link pattern is broken")
	}
}

// TestEveryDocsPageLinked: each page under docs/ is reachable from the
// README.md, so no page is written and then lost.
func TestEveryDocsPageLinked(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, line := range prose(string(b)) {
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			path, _, _ := strings.Cut(m[1], "#")
			linked[path] = true
		}
	}
	for _, p := range pages(t, root) {
		if strings.HasPrefix(p, "docs/") && !linked[p] {
			t.Errorf("README.md does not link %s", p)
		}
	}
}
