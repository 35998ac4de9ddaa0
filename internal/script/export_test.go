package script

// RunMeasured is Run that also says the child's peak resident set in bytes.
var RunMeasured = run

// RaceMemory is the headroom a race-detector build gives its children (0 otherwise).
const RaceMemory = raceMemory
