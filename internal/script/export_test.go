package script

// RunMeasured is Run that also says the child's peak resident set in bytes.
var RunMeasured = run
