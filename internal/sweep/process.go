package sweep

import (
	"os"
	"strconv"
	"strings"
)

// Process names this process as the holder of the turns it leases (store.Store.HoldAs):
// "host/pid/start", its host name, process id and the kernel's start time of that process
// (clock ticks since boot, /proc/<pid>/stat), so that a process id used again by another
// process is not taken for this one. "" where /proc cannot be read (not Linux): the lease
// alone then decides.
func Process() string {
	host, err := os.Hostname()
	if err != nil || host == "" || strings.Contains(host, "/") {
		return ""
	}
	pid := os.Getpid()
	start, ok := startTime(pid)
	if !ok {
		return ""
	}
	return host + "/" + strconv.Itoa(pid) + "/" + start
}

// hostOf is the "host/" prefix of holders on the same host as holder; "" when holder is not
// a Process name.
func hostOf(holder string) string {
	host, _, ok := strings.Cut(holder, "/")
	if !ok || host == "" {
		return ""
	}
	return host + "/"
}

// gone reports whether holder, a Process name of this host, names a process that no longer
// runs: no such process id, or one started at another time.
func gone(holder string) bool {
	parts := strings.Split(holder, "/")
	if len(parts) != 3 {
		return false // not ours to judge: its lease decides
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	start, ok := startTime(pid)
	return !ok || start != parts[2]
}

// startTime reads field 22 of /proc/<pid>/stat, the process's start time; false when there
// is no such process.
func startTime(pid int) (string, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count from the
	// last ")". Field 3 (state) is the first after it, so field 22 is the 20th.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 20 {
		return "", false
	}
	return fields[19], true
}
