package batch

import (
	"strings"
	"testing"
)

func TestSplitMultipart(t *testing.T) {
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
