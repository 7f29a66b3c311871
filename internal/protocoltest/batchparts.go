package protocoltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// BatchPart is one embedded response of a $batch response.
type BatchPart struct {
	StatusCode  int
	Header      http.Header
	Body        []byte
	InChangeset bool
}

// ReadBatchParts reads a $batch response body: a multipart/mixed of either
// one changeset (itself multipart/mixed) or one lone response. The parts
// come in the order of the operations they answer.
func ReadBatchParts(contentType string, body []byte) ([]BatchPart, error) {
	return readBatchParts(contentType, body, false)
}

func readBatchParts(contentType string, body []byte, inChangeset bool) ([]BatchPart, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	if mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, fmt.Errorf("content type %q is not multipart/mixed with a boundary", contentType)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out []BatchPart
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		ct := p.Header.Get("Content-Type")
		if strings.HasPrefix(ct, "multipart/mixed") {
			inner, err := readBatchParts(ct, raw, true)
			if err != nil {
				return nil, fmt.Errorf("changeset: %w", err)
			}
			out = append(out, inner...)
			continue
		}
		if ct != "application/http" {
			return nil, fmt.Errorf("part content type %q, want application/http", ct)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			return nil, fmt.Errorf("embedded response: %w", err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, BatchPart{StatusCode: resp.StatusCode, Header: resp.Header, Body: b, InChangeset: inChangeset})
	}
}

// BatchFailure is what the part of a failed changeset says: the odata.error
// code, and the index of the failing operation, which Azure puts at the
// start of the message ("2:The specified entity already exists."), as
// "Performing entity group transactions" describes.
type BatchFailure struct {
	Index int
	Code  string
	// Message is the first line of the error message, index included.
	Message string
}

// Failure reads the odata.error of a failed changeset's part.
func (p BatchPart) Failure() (BatchFailure, error) {
	var e struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(p.Body, &e); err != nil {
		return BatchFailure{}, fmt.Errorf("part body %s is not an odata.error: %w", truncate(p.Body), err)
	}
	first, _, _ := strings.Cut(e.Err.Message.Value, "\n")
	digits, _, found := strings.Cut(first, ":")
	index, err := strconv.Atoi(digits)
	if !found || err != nil || index < 0 {
		return BatchFailure{Index: -1, Code: e.Err.Code, Message: first}, fmt.Errorf("message %q does not start with the failing operation's index", first)
	}
	return BatchFailure{Index: index, Code: e.Err.Code, Message: first}, nil
}
