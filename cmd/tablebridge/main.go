// Command tablebridge is the tablebridge command line: the local server and
// the tools around it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// subcommands maps each subcommand to its entry point. Each lives in its own
// file (serve.go, bench.go, ...).
var subcommands = map[string]struct {
	run   func(args []string) error
	usage string
}{}

func register(name, usage string, run func(args []string) error) {
	subcommands[name] = struct {
		run   func(args []string) error
		usage string
	}{run, usage}
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		reportError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// reportError prints err once, unless it was already shown (help, or a
// message the command printed itself).
func reportError(w io.Writer, err error) {
	if !errors.Is(err, errShown) {
		fmt.Fprintln(w, "tablebridge:", err)
	}
}

// exitError carries a specific exit status (verify uses 1 for "differs").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errShown ends a command whose output already said everything: -h.
var errShown = errors.New("already shown")

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func run(args []string) error {
	if len(args) == 0 {
		printUsage(os.Stderr)
		return &exitError{2, errors.New("no subcommand given")}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			// "tablebridge help serve" is "tablebridge serve -h".
			if _, ok := subcommands[args[1]]; ok {
				return run([]string{args[1], "-h"})
			}
			return usageError("help: unknown subcommand %q (see tablebridge help)", args[1])
		}
		printUsage(os.Stdout)
		return nil
	case "version", "-version", "--version":
		fmt.Println("tablebridge", versionString())
		return nil
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		return usageError("unknown subcommand %q (see tablebridge help)", args[0])
	}
	return sc.run(args[1:])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: tablebridge <subcommand> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(subcommands))
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, subcommands[name].usage)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "version", "print the version and the commit it was built from")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "tablebridge <subcommand> -h shows the flags of a subcommand.")
}
