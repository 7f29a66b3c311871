package batch

import (
	"strings"
	"testing"
)

func TestSplitMultipart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    []string
		wantErr error
	}{
		{name: "CRLF", body: "--b\r\none\r\n--b\r\ntwo\r\n--b--\r\n", want: []string{"one", "two"}},
		{name: "bare LF", body: "--b\none\n--b\ntwo\n--b--", want: []string{"one", "two"}},
		{name: "mixed line ends", body: "--b\r\none\n--b\ntwo\r\n--b--", want: []string{"one", "two"}},
		{name: "empty part", body: "--b\r\n--b\r\nx\r\n--b--", want: []string{"", "x"}},
		{name: "part keeps inner line breaks", body: "--b\r\na\r\n\r\nb\r\n\r\n--b--", want: []string{"a\r\n\r\nb\r\n"}},
		{name: "preamble and epilogue", body: "pre\r\n--b\r\nx\r\n--b--\r\npost", want: []string{"x"}},
		{name: "padding after delimiters", body: "--b \t\r\nx\r\n--b  \r\ny\r\n--b--", want: []string{"x", "y"}},
		{name: "last delimiter without --", body: "--b\r\nx\r\n--b\r\n\r\n", want: []string{"x"}},
		{name: "last delimiter at the very end", body: "--b\r\nx\r\n--b", want: []string{"x"}},
		{name: "longer boundary is not a delimiter", body: "--b\r\nx\r\n--bb\r\n--b--", want: []string{"x\r\n--bb"}},
		{name: "delimiter must start a line", body: "--b\r\nx --b\r\n--b--", want: []string{"x --b"}},
		{name: "no parts", body: "--b--", want: nil},
		{name: "no opening delimiter", body: "x\r\n", wantErr: errNoOpeningBoundary},
		{name: "empty body", body: "", wantErr: errNoOpeningBoundary},
		{name: "unterminated part", body: "--b\r\nx\r\n", wantErr: errUnterminatedPart},
		{name: "stops after limit+1 parts", body: strings.Repeat("--b\r\n", 50), want: strings.Split(strings.Repeat("|", 10), "|")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, err := splitMultipart(nil, tt.body, "b", 10)
			if err != tt.wantErr {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			var got []string
			for _, p := range parts {
				got = append(got, tt.body[p.start:p.end])
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("parts = %q, want %q", got, tt.want)
			}
		})
	}
}

// referenceFindDelimiter is findDelimiter as it was before it searched for
// the line break and the delimiter together (with delimiterSearch): every
// occurrence of the delimiter found by strings.Index, kept if it starts a
// line.
func referenceFindDelimiter(body, delimiter string, from int) int {
	for from <= len(body) {
		i := strings.Index(body[from:], delimiter)
		if i < 0 {
			return -1
		}
		p := from + i
		if (p == 0 || body[p-1] == '\n') && delimiterLineEnds(body[p+len(delimiter):]) {
			return p
		}
		from = p + 1
	}
	return -1
}

// TestFindDelimiterMatchesReference runs findDelimiter and the reference
// from every offset of bodies that put delimiters, near misses, line
// breaks and dashes at the start, the end and everywhere between.
func TestFindDelimiterMatchesReference(t *testing.T) {
	t.Parallel()
	bodies := []string{
		"", "--b", "--b--", "x--b", "\n--b", "\r\n--b", "--b\r\n", "--bb\n--b\n", "---b\n--b --\n",
		"--b\r\nx\r\n--b\r\ny\r\n--b--\r\n",
		"pre\n--b\tx\n--b \t\r\ny\n-\n--\n--b",
		"a-b--b-\n--b-\n--b\n\n--b",
		"--b\n--b\n--b\n",
		"\n\n\n--b",
	}
	for _, body := range bodies {
		for from := 0; from <= len(body); from++ {
			if got, want := findDelimiter(body, newDelimiterSearch("b"), from), referenceFindDelimiter(body, "--b", from); got != want {
				t.Errorf("findDelimiter(%q, from %d) = %d, want %d", body, from, got, want)
			}
		}
	}
}

func FuzzFindDelimiter(f *testing.F) {
	f.Add("--b\r\nx\r\n--b\r\ny\r\n--b--\r\n", "b", 0)
	f.Add("a-b--b-\n--b-\n--b\n\n--b", "b", 3)
	f.Fuzz(func(t *testing.T, body, boundary string, from int) {
		if boundary == "" || from < 0 || from > len(body) {
			return
		}
		if got, want := findDelimiter(body, newDelimiterSearch(boundary), from), referenceFindDelimiter(body, "--"+boundary, from); got != want {
			t.Fatalf("findDelimiter(%q, %q, %d) = %d, want %d", body, boundary, from, got, want)
		}
	})
}

// TestValidHeaderValueEveryByte puts every byte value at every position of
// values around the word size and compares validHeaderValue with the byte
// table it speeds up.
func TestValidHeaderValueEveryByte(t *testing.T) {
	t.Parallel()
	for size := 1; size <= 24; size++ {
		for pos := range size {
			for c := range 256 {
				v := []byte(strings.Repeat("a", size))
				v[pos] = byte(c)
				want := headerByteClass[c]&classValue != 0
				if got := validHeaderValue(string(v)); got != want {
					t.Fatalf("validHeaderValue(%q) = %v, want %v", v, got, want)
				}
			}
		}
	}
}

// TestDelimiterSearchMatchesIndex compares the Horspool search with
// strings.Index for boundaries whose bytes repeat in the text, from every
// offset, including a boundary longer than the 255 bytes a shift can hold.
func TestDelimiterSearchMatchesIndex(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab-", 100)
	for _, tc := range []struct{ boundary, body string }{
		{"b", "--b\n--b\n-\n--\n--bb\n--b"},
		{"changeset_8a7b", "x\n--changeset_8a7\n--changeset_8a7b\n--changeset_8a7b--"},
		{"aaa", "aaaa\n--aa\n--aaa\n--aaaa"},
		{long, "\n--" + long[:200] + "\n--" + long + "x\n--" + long},
	} {
		s := newDelimiterSearch(tc.boundary)
		for from := 0; from <= len(tc.body); from++ {
			want := strings.Index(tc.body[from:], "\n--"+tc.boundary)
			if want >= 0 {
				want += from
			}
			if got := s.index(tc.body, from); got != want {
				t.Fatalf("boundary %q, from %d: index = %d, want %d", tc.boundary, from, got, want)
			}
		}
	}
}
