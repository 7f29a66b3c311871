package auth_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// FuzzParseSAS feeds arbitrary query strings (with and without a valid
// signature appended) to Authenticate. It must never panic, and every
// refusal must be a 4xx *apierr.Error.
func FuzzParseSAS(f *testing.F) {
	seeds := []string{
		"sv=2019-02-02&ss=t&srt=sco&sp=rl&st=2006-01-02T14%3A00%3A00Z&se=2006-01-02T16%3A00%3A00Z&spr=https%2Chttp&sig=tk3XK7ShtLyuZ6vHT3sZ1vqgNTlf6rsdxSg5SWvJasc%3D",
		"sv=2019-02-02&tn=mytable&sp=raud&st=2006-01-02T14%3A00%3A00Z&se=2006-01-02T16%3A00%3A00Z&sig=BPLKqyBcWlarGpfqFFrbzgMtUJ9w7LEC3D0jKX%2FstaY%3D",
		"sv=2019-02-02&tn=t&si=p&spk=a&srk=b&epk=c&erk=d&sip=1.2.3.4-1.2.3.9&spr=https&sig=x",
		"sig=&sv=&tn=",
		"sig=%zz&sv=9999-99-99&ss=t&srt=o&sp=r&se=x",
		"sv=2020-12-06&ss=t&srt=o&sp=r&se=2099-01-01&ses=s&sip=::1-::2&sig=AAAA",
		"sp=r&sp=w&sig=1",
	}
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	store := &policyStore{byTable: map[string][]model.SignedIdentifier{
		"mytable": {{ID: "p", Expiry: inAnHour, Permission: "raud"}, {ID: "bare"}},
	}}
	v := newVerifier(f, store.lookup)
	f.Fuzz(func(t *testing.T, rawQuery string, resign bool) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		if resign {
			// Give the fuzzer tokens that pass the signature check, so the
			// checks behind it are reached too.
			if q.Has("tn") {
				q = resignTable(t, q, "sv", q.Get("sv"))
			} else {
				q = resignAccount(t, q, "sv", q.Get("sv"))
			}
		}
		if !q.Has("sig") {
			q.Set("sig", "")
		}
		r := sasRequest("mytable", q)
		p, err := v.Authenticate(context.Background(), r)
		if err != nil {
			aerr, ok := apierr.As(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *apierr.Error", err, err)
			}
			if s := aerr.HTTPStatus(); s < 400 || s >= 500 {
				t.Fatalf("status %d for %q: %v", s, rawQuery, err)
			}
			return
		}
		// Whatever was accepted must answer every question without panicking.
		for op := operation.QueryTables; op <= operation.GetServiceStats; op++ {
			if err := p.Authorize(op, "mytable"); err != nil {
				if aerr, ok := apierr.As(err); !ok || aerr.HTTPStatus() != http.StatusForbidden {
					t.Fatalf("Authorize(%v) = %v", op, err)
				}
			}
		}
		p.AllowsEntity("a", "b")
		if kr, ok := p.KeyRange(); ok {
			kr.Contains("a", "b")
		}
	})
}

// FuzzAuthorizationHeader feeds arbitrary Authorization and date headers.
func FuzzAuthorizationHeader(f *testing.F) {
	f.Add("SharedKeyLite devstoreaccount1:3svmP0XHvm4ExgARMndpDUhKEUmE1Ao/3JqG3Wfp+UE=", vectorDate, "/devstoreaccount1/Tables")
	f.Add("SharedKey devstoreaccount1:", "", "")
	f.Add("SharedKey :::", "Mon, 02 Jan 2006 15:04:05 GMT", "%zz")
	f.Add("Bearer x", "x", "/a%2")
	v := newVerifier(f, nil)
	f.Fuzz(func(t *testing.T, authz, date, path string) {
		h := http.Header{}
		h.Set("Authorization", authz)
		h.Set("x-ms-date", date)
		_, err := v.Authenticate(context.Background(), auth.Request{
			Account: devAccount, SignedPath: path, Query: url.Values{}, Header: h, Method: http.MethodGet, Now: testNow,
		})
		if err != nil {
			aerr, ok := apierr.As(err)
			if !ok || aerr.HTTPStatus() < 400 || aerr.HTTPStatus() >= 500 {
				t.Fatalf("error %v is not a 4xx *apierr.Error", err)
			}
		}
	})
}
