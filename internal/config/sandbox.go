package config

// Sandbox is run_command's: whether `steward serve` offers it, whether standing rules may
// allow it, and the bounds of its bubblewrap sandbox (docs/CODE.md).
type Sandbox struct {
	// Shell turns on run_command under bubblewrap for `steward serve` on Linux
	// (STEWARD_SHELL=on; off by default); ShellRules lets standing rules allow it
	// (STEWARD_SHELL_RULES=on); ShellRoot holds the owners' workspaces (STEWARD_SHELL_ROOT,
	// empty: <temp dir>/steward-workspaces).
	Shell, ShellRules bool
	ShellRoot         string
	// ShellMemoryMB bounds a command's whole sandbox, /tmp and /dev/shm included, through a
	// memory cgroup (STEWARD_SHELL_MEMORY, 512); ShellTmpMB sizes its /tmp and /dev/shm, each
	// (STEWARD_SHELL_TMP, 64); ShellDiskMB is a workspace's quota (STEWARD_SHELL_DISK, 1024);
	// ShellCgroup is where the memory cgroups are made (STEWARD_SHELL_CGROUP: auto, off or a
	// cgroup directory).
	ShellMemoryMB, ShellTmpMB, ShellDiskMB int
	ShellCgroup                            string
}

// sandbox reads the Sandbox area.
func (r *reader) sandbox() Sandbox {
	return Sandbox{
		Shell:         r.boolean("STEWARD_SHELL"),
		ShellRules:    r.boolean("STEWARD_SHELL_RULES"),
		ShellRoot:     r.str("STEWARD_SHELL_ROOT", ""),
		ShellMemoryMB: r.intIn("STEWARD_SHELL_MEMORY", 512, 64, 1<<20),
		ShellTmpMB:    r.intIn("STEWARD_SHELL_TMP", 64, 1, 1<<20),
		ShellDiskMB:   r.intIn("STEWARD_SHELL_DISK", 1024, 1, 1<<30),
		ShellCgroup:   r.str("STEWARD_SHELL_CGROUP", "auto"),
	}
}
