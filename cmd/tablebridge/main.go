// Command tablebridge is the tablebridge command line: the local server and
// the tools around it.
package main

import (
	"errors"
	"flag"
	"fmt"
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
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "tablebridge:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitError carries a specific exit status (verify uses 1 for "differs").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

func run(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		printUsage()
		if len(args) == 0 {
			return &exitError{2, errors.New("no subcommand")}
		}
		return nil
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		printUsage()
		return &exitError{2, fmt.Errorf("unknown subcommand %q", args[0])}
	}
	return sc.run(args[1:])
}

func printUsage() {
	fmt.Fprintln(os.Stderr, "usage: tablebridge <subcommand> [flags]")
	fmt.Fprintln(os.Stderr)
	names := make([]string, 0, len(subcommands))
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", name, subcommands[name].usage)
	}
}
