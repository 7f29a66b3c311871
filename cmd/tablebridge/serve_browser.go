package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/tablebridge/tablebridge/internal/databrowser"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// browserFlags is serve's -browser: the data browser at /_browser/
// (internal/databrowser, which says how it is authorized).
type browserFlags struct {
	mode string // auto, on or off
}

func (f *browserFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "browser", "auto", "data browser at /_browser/: auto (on when -listen is a loopback address), on, or off")
}

// enabled decides for the address serve listens on. auto serves it on
// loopback only: the page is harmless without the link's SAS, but a server
// reachable from the network should not offer an admin page nobody asked
// for.
func (f *browserFlags) enabled(listen string) (bool, error) {
	switch f.mode {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "auto", "":
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return false, nil
		}
		if host == "localhost" {
			return true, nil
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback(), nil
	}
	return false, usageError("serve: -browser %q: want auto, on or off", f.mode)
}

// mount serves the page beside the API and prints its link, signed for
// every account; h unchanged when the browser is off.
func (f *browserFlags) mount(h http.Handler, listen, base string, accounts []auth.Account, out io.Writer) (http.Handler, error) {
	on, err := f.enabled(listen)
	if err != nil || !on {
		return h, err
	}
	link, err := databrowser.Link(base, accounts, time.Now())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "data browser (its link carries an account SAS valid for %d days; share it as you would the key):\n  %s\n",
		int(databrowser.Validity/(24*time.Hour)), link)
	return databrowser.Mount(h), nil
}
