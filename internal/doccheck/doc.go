// Package doccheck holds a test, and nothing else, that keeps the
// project's Markdown (README.md, CONTRIBUTING.md, SECURITY.md and the
// pages under docs/) from drifting apart: every relative link must name a
// file that exists, and every #anchor a heading of its page, spelt as
// GitHub spells heading anchors. It needs nothing but Go and the files, so
// it runs in `make check`.
package doccheck
