// Command propagit is the one binary: the CLI (render, diff, explain, lint,
// status) and the long-running controller and agent.
package main

import (
	"os"

	"github.com/propagit/propagit/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
