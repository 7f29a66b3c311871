package migrate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// The export format: newline-delimited JSON, UTF-8, one table per file,
// optionally gzip-compressed (detected by its magic bytes on import).
//
// The first line is a header object naming the table:
//
//	{"format":"tablebridge-ndjson","version":1,"table":"Customers"}
//
// Every further line is one entity, a JSON object as the Table service
// writes it at full metadata, without the odata.* control members:
// PartitionKey, RowKey, Timestamp, then the properties in name order. Every
// property that is not an Edm.String carries its "Name@odata.type"
// annotation (Int32, Double and Boolean too), so the Edm type never depends
// on how a reader infers JSON numbers:
//
//	{"PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-02T03:04:05.1234567Z","Age@odata.type":"Edm.Int32","Age":42,"Ratio@odata.type":"Edm.Double","Ratio":1.0,"Id@odata.type":"Edm.Int64","Id":"9223372036854775807","Name":"Ann"}
//
// Values are spelled as on the wire: Int64 as a decimal string, Double as a
// number with a fraction or exponent, or "NaN", "Infinity", "-Infinity";
// DateTime with seven fractional digits and Z; Binary as standard base64.
// Import reads lines with shared/edm's decoder, which also takes any other
// valid Table service JSON entity. The Timestamp is informational: the
// destination assigns its own, unless -keep-timestamp keeps it as a
// property.

// ExportFormat is the header's format name.
const ExportFormat = "tablebridge-ndjson"

// ExportHeader is the first line of an export file.
type ExportHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Table   string `json:"table"`
}

const exportVersion = 1

// ExportWriter writes one table's export file.
type ExportWriter struct {
	w   *bufio.Writer
	buf []byte
	n   int64
}

// NewExportWriter writes the header for table to w.
func NewExportWriter(w io.Writer, table string) (*ExportWriter, error) {
	hdr, err := json.Marshal(ExportHeader{Format: ExportFormat, Version: exportVersion, Table: table})
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.Write(append(hdr, '\n')); err != nil {
		return nil, err
	}
	return &ExportWriter{w: bw}, nil
}

// Write appends one entity line.
func (x *ExportWriter) Write(e *model.Entity) error {
	x.buf = AppendEntityJSON(x.buf[:0], e, true)
	x.buf = append(x.buf, '\n')
	_, err := x.w.Write(x.buf)
	if err == nil {
		x.n++
	}
	return err
}

// Count is the number of entities written.
func (x *ExportWriter) Count() int64 { return x.n }

// Flush writes out what is buffered.
func (x *ExportWriter) Flush() error { return x.w.Flush() }

// ExportTable writes every entity of table from src to w, in the order the
// source returns them, and returns the count.
func ExportTable(ctx context.Context, src Source, table string, w io.Writer, b Backoff, progress Progress) (int64, error) {
	if progress == nil {
		progress = NoProgress{}
	}
	x, err := NewExportWriter(w, table)
	if err != nil {
		return 0, err
	}
	// The keys-only count is for the progress total; nothing shown, no
	// count (-1: no total).
	total := int64(-1)
	if _, quiet := progress.(NoProgress); !quiet {
		if total, err = countEntities(ctx, src, table, b, progress, table, false); err != nil {
			progress.End(table, err)
			return 0, err
		}
	}
	progress.Begin(table, "exporting", total, 0)
	req := PageRequest{Top: MaxPageSize}
	for {
		page, err := b.readPage(ctx, src, table, req)
		if err != nil {
			progress.End(table, err)
			return x.Count(), err
		}
		for _, e := range page.Entities {
			if err := x.Write(e); err != nil {
				progress.End(table, err)
				return x.Count(), err
			}
		}
		progress.Add(table, int64(len(page.Entities)))
		if page.Next == nil {
			break
		}
		req.After = page.Next
	}
	err = x.Flush()
	progress.End(table, err)
	return x.Count(), err
}

// ExportReader reads an export file.
type ExportReader struct {
	Header ExportHeader
	r      *bufio.Reader
	closer io.Closer
	line   int64
}

// NewExportReader reads the header from r, which may be gzip-compressed.
func NewExportReader(r io.Reader) (*ExportReader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var closer io.Closer
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		closer = zr
		br = bufio.NewReaderSize(zr, 256<<10)
	}
	x := &ExportReader{r: br, closer: closer}
	line, err := x.readLine()
	if err == io.EOF {
		return nil, errors.New("empty file: no header line")
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(line, &x.Header); err != nil {
		return nil, fmt.Errorf("line 1: not a %s header: %w", ExportFormat, err)
	}
	if x.Header.Format != ExportFormat {
		return nil, fmt.Errorf("line 1: not a %s header (format %q)", ExportFormat, x.Header.Format)
	}
	if x.Header.Version != exportVersion {
		return nil, fmt.Errorf("line 1: version %d, want %d", x.Header.Version, exportVersion)
	}
	if err := model.ValidateTableName(x.Header.Table); err != nil {
		return nil, fmt.Errorf("line 1: table %q: %w", x.Header.Table, err)
	}
	return x, nil
}

// readLine returns the next non-empty line without its newline; io.EOF at
// the end. Lines have no length limit: an entity may take megabytes.
func (x *ExportReader) readLine() ([]byte, error) {
	for {
		line, err := x.r.ReadBytes('\n')
		if len(line) > 0 || err == nil {
			x.line++
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Next returns the next entity, or io.EOF after the last.
func (x *ExportReader) Next() (*model.Entity, error) {
	line, err := x.readLine()
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("line %d: %w", x.line, err)
		}
		return nil, err
	}
	e, err := DecodeEntity(line)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", x.line, err)
	}
	return e, nil
}

// Close releases the gzip reader, if any (not the underlying reader).
func (x *ExportReader) Close() error {
	if x.closer != nil {
		return x.closer.Close()
	}
	return nil
}

// FileSource reads export files as a Source: each file is one table, read
// front to back. Its continuation is the number of entities already read,
// so a resumed import reopens the file and skips them.
type FileSource struct {
	files map[string]string // lower-cased table -> path
	names []string          // tables in the order given

	mu   sync.Mutex
	open map[string]*openFile
}

type openFile struct {
	f      *os.File
	x      *ExportReader
	offset int64
}

var _ Source = (*FileSource)(nil)

// NewFileSource reads the headers of paths. Two files may not hold the same
// table.
func NewFileSource(paths []string) (*FileSource, error) {
	s := &FileSource{files: map[string]string{}, open: map[string]*openFile{}}
	for _, p := range paths {
		// Absolute, so the checkpoint names the same files from any
		// working directory.
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		of, err := openExport(p)
		if err != nil {
			return nil, err
		}
		table := of.x.Header.Table
		of.close()
		key := strings.ToLower(table)
		if other, dup := s.files[key]; dup {
			return nil, fmt.Errorf("%s and %s both hold table %s", other, p, table)
		}
		s.files[key] = p
		s.names = append(s.names, table)
	}
	return s, nil
}

func openExport(path string) (*openFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	x, err := NewExportReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &openFile{f: f, x: x}, nil
}

func (o *openFile) close() {
	o.x.Close()
	o.f.Close()
}

// Describe lists the files.
func (s *FileSource) Describe() string {
	paths := make([]string, 0, len(s.names))
	for _, n := range s.names {
		paths = append(paths, s.files[strings.ToLower(n)])
	}
	return "files " + strings.Join(paths, ",")
}

// Tables returns the tables of the files, in the order given.
func (s *FileSource) Tables(context.Context) ([]string, error) {
	return append([]string(nil), s.names...), nil
}

// SplitsRanges: a file is read front to back.
func (s *FileSource) SplitsRanges() bool { return false }

// ReadPage reads the next req.Top entities of the table's file. A request
// that does not continue where the last one stopped reopens the file and
// skips to its offset.
func (s *FileSource) ReadPage(ctx context.Context, table string, req PageRequest) (Page, error) {
	if !req.Range.Whole() {
		return Page{}, errors.New("file source: PartitionKey ranges are not supported")
	}
	if !req.Since.IsZero() {
		return Page{}, errors.New("file source: an export file is a snapshot and cannot be followed")
	}
	path, ok := s.files[strings.ToLower(table)]
	if !ok {
		return Page{}, fmt.Errorf("no file holds table %s: %w", table, store.ErrTableNotFound)
	}
	var offset int64
	if req.After != nil {
		offset = req.After.Offset
	}
	key := strings.ToLower(table)
	s.mu.Lock()
	of := s.open[key]
	delete(s.open, key)
	s.mu.Unlock()
	if of == nil || of.offset != offset {
		if of != nil {
			of.close()
		}
		var err error
		if of, err = openExport(path); err != nil {
			return Page{}, err
		}
		for of.offset < offset {
			if _, err := of.x.Next(); err != nil {
				of.close()
				if err == io.EOF {
					err = fmt.Errorf("%s has %d entities, fewer than the %d already read", path, of.offset, offset)
				}
				return Page{}, err
			}
			of.offset++
		}
	}
	top := req.Top
	if top <= 0 {
		top = MaxPageSize
	}
	var page Page
	for len(page.Entities) < top {
		if err := ctx.Err(); err != nil {
			of.close()
			return Page{}, err
		}
		e, err := of.x.Next()
		if err == io.EOF {
			of.close()
			return page, nil
		}
		if err != nil {
			of.close()
			return Page{}, fmt.Errorf("%s: %w", path, err)
		}
		of.offset++
		page.Entities = append(page.Entities, e)
	}
	page.Next = &Continuation{Offset: of.offset}
	s.mu.Lock()
	s.open[key] = of
	s.mu.Unlock()
	return page, nil
}

// Close closes the files left open.
func (s *FileSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, of := range s.open {
		of.close()
		delete(s.open, k)
	}
	return nil
}
