package tools

// MaxLine bounds a whole summary, for the tests.
const MaxLine = maxLine
