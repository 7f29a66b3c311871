package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is set at link time by make install and make cli
// (-ldflags "-X main.version=..."); without it the module version and the
// VCS stamp of the build say what was built.
var version = ""

// versionString is what tablebridge version prints: the version, the
// commit (with "+dirty" when the tree had uncommitted changes) and its
// date, and the Go release.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	v := version
	if v == "" {
		v = "devel"
		if ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if !ok {
		return v
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var parts []string
	if rev := settings["vcs.revision"]; rev != "" {
		commit := "commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			commit += "+dirty"
		}
		if at := settings["vcs.time"]; at != "" {
			commit += " " + at
		}
		parts = append(parts, commit)
	}
	parts = append(parts, info.GoVersion)
	return v + " (" + strings.Join(parts, ", ") + ")"
}

// newFlagSet is the flag set of a subcommand; synopsis is the usage line
// after "usage: tablebridge ".
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: tablebridge %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses a subcommand's flags. -h prints the usage on help and
// ends the command with status 0 (errShown); a bad flag is one error line
// naming the way to the usage, with status 2.
func parseFlags(fs *flag.FlagSet, args []string, help io.Writer) error {
	fs.SetOutput(io.Discard) // the flag package would print the error and the usage too
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(help)
		fs.Usage()
		return &exitError{0, errShown}
	}
	if err != nil {
		return usageError("%s: %v (see tablebridge %s -h)", fs.Name(), err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usageError("%s: unexpected argument %q (see tablebridge %s -h)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// usageError marks a bad command line: exit status 2.
func usageError(format string, a ...any) error {
	return &exitError{2, fmt.Errorf(format, a...)}
}
