// Package doccheck holds tests, and nothing else, that keep the project's
// prose from drifting away from what it describes:
//
//   - links_test.go: every relative link of the Markdown (README.md,
//     CONTRIBUTING.md, SECURITY.md and the pages under docs/) names a file
//     that exists, and every #anchor a heading of its page, spelt as GitHub
//     spells heading anchors.
//   - pointers_test.go: what Go comments and messages, the makefiles,
//     scripts, YAML and Markdown point to exists (each make target, page,
//     #anchor and quoted section), and nothing cites an issue tracker's
//     numbers, which a reader of the code does not have.
//
// They need nothing but Go and the files, so they run in `make check`.
package doccheck
