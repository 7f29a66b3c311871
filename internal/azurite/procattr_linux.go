package azurite

import "syscall"

// childProcAttr kills Node when the process that started it dies, so a
// crashed or interrupted test binary does not leave Azurite running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
