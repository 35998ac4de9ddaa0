// Package lambdatest holds the tests of Steward's Lambda deployment: template.yaml against the
// code (runtimes, builds, routes), and the functions themselves built as bootstrap binaries
// and run under the AWS Lambda Runtime Interface Emulator, one process per function. It has
// no code of its own.
package lambdatest
