//go:build !linux

package localproc

import "syscall"

// childProcAttr has no parent-death signal outside Linux; Stop must run.
func childProcAttr() *syscall.SysProcAttr { return nil }
