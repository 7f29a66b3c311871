package localproc

import "syscall"

// childProcAttr kills the child when the process that started it dies, so a
// crashed or interrupted test binary does not leave a server running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
