package dynamolocal

import "syscall"

// childProcAttr kills the JVM when the process that started it dies, so a
// crashed or interrupted test binary does not leave DynamoDB Local running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
