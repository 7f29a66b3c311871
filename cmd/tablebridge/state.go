package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// autoCheckpoint is the -checkpoint default: a file per command, source
// and destination in the state directory, so checkpoints never land in
// the working tree and two migrations never share one.
const autoCheckpoint = "auto"

// stateDir is where tablebridge keeps the state of its runs (migration
// checkpoints): $XDG_STATE_HOME/tablebridge, else ~/.local/state/tablebridge
// (the XDG default); %LocalAppData%\tablebridge on Windows and
// ~/Library/Application Support/tablebridge on macOS.
func stateDir() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "tablebridge"), nil
	}
	switch runtime.GOOS {
	case "windows", "darwin":
		dir, err := os.UserConfigDir() // %AppData% or ~/Library/Application Support
		if runtime.GOOS == "windows" {
			if local := os.Getenv("LocalAppData"); local != "" {
				dir, err = local, nil
			}
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, "tablebridge"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory for the checkpoint; give -checkpoint FILE")
	}
	return filepath.Join(home, ".local", "state", "tablebridge"), nil
}

// defaultCheckpoint names the checkpoint of cmd from source to dest:
// <state dir>/<cmd>-<hash of both>.checkpoint.json.
func defaultCheckpoint(cmd, source, dest string) (string, error) {
	dir, err := stateDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(cmd + "\x00" + source + "\x00" + dest))
	return filepath.Join(dir, cmd+"-"+hex.EncodeToString(sum[:6])+".checkpoint.json"), nil
}
