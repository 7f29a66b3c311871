package loadgen

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestSharedKeyLiteVectors(t *testing.T) {
	// Signatures aztables v1.4.1 computed for these requests (captured from
	// the SDK against a recording server; TestSignatureMatchesAztables
	// re-checks against the live SDK).
	cases := []struct {
		name, date, path, query, want string
	}{
		{
			name: "point read with escaped keys",
			date: "Sat, 21 Nov 2026 02:10:44 GMT",
			path: "/devstoreaccount1/vectors(PartitionKey='p%27%271',RowKey='r%201')",
			want: "SharedKeyLite devstoreaccount1:6ahrFnM2bq75JaH5aXxvk3KM9erC3SUAl4auNMxDjPY=",
		},
		{
			name:  "comp=acl is part of the resource",
			date:  "Sat, 21 Nov 2026 02:10:44 GMT",
			path:  "/devstoreaccount1/vectors",
			query: "comp=acl",
			want:  "SharedKeyLite devstoreaccount1:RTVcR1a9t3PFt1yWsh1sQ0VaSH3BqM8Rr+H2se1AeCU=",
		},
	}
	s := newSharedKeyLite(DevStoreAccount, mustDecodeKey(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := s.authorization(DevStoreAccount, c.date, c.path, c.query); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestStringToSign(t *testing.T) {
	cases := []struct {
		name, path, query, want string
	}{
		{"path-style names the account twice", "/devstoreaccount1/t()", "$filter=x", "D\n/devstoreaccount1/devstoreaccount1/t()"},
		{"root path", "", "restype=service&comp=properties", "D\n/devstoreaccount1/?comp=properties"},
		{"comp is decoded, first value only", "/a/t", "comp=a%63l&comp=x", "D\n/devstoreaccount1/a/t?comp=acl"},
		{"other parameters are left out", "/a/$batch", "timeout=30&compx=1", "D\n/devstoreaccount1/a/$batch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(stringToSign(nil, DevStoreAccount, "D", c.path, c.query)); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestDateCache(t *testing.T) {
	now := time.Date(2026, 11, 21, 2, 10, 44, 100, time.FixedZone("CET", 3600))
	d := dateCache{now: func() time.Time { return now }}
	if got := d.get(); got != "Sat, 21 Nov 2026 01:10:44 GMT" {
		t.Fatalf("x-ms-date %q, want RFC 1123 in GMT", got)
	}
	now = now.Add(time.Second - 100)
	if got := d.get(); got != "Sat, 21 Nov 2026 01:10:45 GMT" {
		t.Fatalf("x-ms-date %q after crossing a second", got)
	}
}

func TestTransportRefusesRemoteAddresses(t *testing.T) {
	// The dialer's check runs before connect, so no packet leaves the host.
	client := &http.Client{Transport: newTransport(1, false), Timeout: 5 * time.Second}
	for _, target := range []string{"http://192.0.2.1:9/", "http://[2001:db8::1]:9/"} {
		t.Run(target, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, target, nil)
			_, err := client.Do(req)
			if !errors.Is(err, ErrRemoteEndpoint) {
				t.Fatalf("error %v, want ErrRemoteEndpoint", err)
			}
		})
	}
}
