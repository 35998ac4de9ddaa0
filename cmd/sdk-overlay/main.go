// Command sdk-overlay prepares, in DIR, the go.mod the Lambda bootstraps are built with
// (go build -modfile; internal/sdkoverlay says what it changes and why) and prints its path:
//
//	go run ./cmd/sdk-overlay DIR
package main

import (
	"fmt"
	"os"

	"github.com/stewardhq/steward/internal/sdkoverlay"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sdk-overlay DIR")
		os.Exit(2)
	}
	goCmd := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		goCmd = root + "/bin/go"
	}
	path, err := sdkoverlay.Write(goCmd, ".", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(path)
}
